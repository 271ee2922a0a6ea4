"""Numerical edge cases found by probing tensorlib as an adversary: each test pins a defect that was
fixed, against an independent reference (float64 NumPy formulas or central differences)."""

import numpy as np
import pytest
from _helpers import central_differences as _central_differences

import tensorlib as tl


def _modes(f):
    """``f`` run eagerly and traced."""
    return [f, tl.function(f)]


# ------------------------------------------------------------------ mean of integers
@pytest.mark.parametrize("mode", [0, 1], ids=["eager", "traced"])
@pytest.mark.parametrize(
    "values, dtype",
    [([2**31 - 1, 2**31 - 1], np.int32), ([2**62, 2**62, 2**62], np.int64), ([2**31 - 1, 1, -5], np.int32)],
)
def test_mean_of_integers_does_not_wrap_around(values, dtype, mode):
    # The integer sum used to wrap around before the division: mean([2**31 - 1] * 2) in int32 was -1.0.
    x = np.array(values, dtype=dtype)
    mean = _modes(tl.mean)[mode](tl.tensor(x))
    assert mean.dtype == np.float64
    np.testing.assert_allclose(mean.numpy(), np.mean(x.astype(np.float64)), rtol=1e-15)
    var = _modes(tl.var)[mode](tl.tensor(x))
    np.testing.assert_allclose(var.numpy(), np.var(x.astype(np.float64)), rtol=1e-12)


def test_mean_of_int32_rows_does_not_wrap_around():
    x = np.full((2, 3), 2**31 - 1, dtype=np.int32)
    np.testing.assert_array_equal(tl.mean(tl.tensor(x), axis=1).numpy(), [2**31 - 1.0, 2**31 - 1.0])


# ------------------------------------------------------------------ clip where the bounds cross
@pytest.mark.parametrize("x", [-1.0, 1.5, 3.0])
def test_clip_gradient_goes_to_the_upper_bound_when_bounds_cross(x):
    # numpy.clip gives clip_value_max wherever it is below clip_value_min; the gradient used to go to
    # the lower bound too for x below it (so d/dlo + d/dhi summed to 2 for an output equal to hi).
    lo, hi = 2.0, 1.0
    args = tuple(tl.tensor(v, dtype="float64") for v in (x, lo, hi))
    assert float(tl.clip(*args)) == np.clip(x, lo, hi) == hi
    grads = tl.grad(tl.clip, argnums=(0, 1, 2))(*args)
    point = np.array([x, lo, hi])
    numeric = _central_differences(lambda v: np.clip(v[0], v[1], v[2]), point)
    np.testing.assert_allclose([float(g) for g in grads], numeric, atol=1e-9)


def test_clip_gradient_inside_and_at_the_bounds():
    x = tl.tensor([0.0, 1.0, 1.5, 2.0, 3.0], dtype="float64")
    lo, hi = tl.tensor(1.0, dtype="float64"), tl.tensor(2.0, dtype="float64")
    gx, glo, ghi = tl.grad(lambda a, b, c: tl.sum(tl.clip(a, b, c)), argnums=(0, 1, 2))(x, lo, hi)
    # At a bound x keeps the gradient (TensorFlow's and PyTorch's clamp).
    assert gx.numpy().tolist() == [0.0, 1.0, 1.0, 1.0, 0.0]
    assert float(glo) == 1.0 and float(ghi) == 1.0


# ------------------------------------------------------------------ an empty list as an index
@pytest.mark.parametrize("mode", [0, 1], ids=["eager", "traced"])
def test_getitem_with_an_empty_list(mode):
    # np.asarray([]) is float64, which the gather rejected: x[[]] raised a TypeError.
    x = np.arange(12.0).reshape(3, 4)
    for index in ([], (slice(None), []), (1, [])):
        got = _modes(lambda t, index=index: t[index])[mode](tl.tensor(x))
        assert got.shape == x[index].shape
        grad = _modes(tl.grad(lambda t, index=index: tl.sum(t[index])))[mode](tl.tensor(x))
        np.testing.assert_array_equal(grad.numpy(), np.zeros_like(x))


# ------------------------------------------------------------------ vector p-norms at zero
@pytest.mark.parametrize("p", [0.5, 1.5, 3.0])
def test_vector_p_norm_gradient_at_zero_is_zero(p):
    # power(sum(|x|**p), 1/p) met 0 * inf at x = 0: the gradient was NaN (the 2-norm's was already 0).
    zeros = tl.tensor(np.zeros((2, 3)), dtype="float64")
    norm = tl.linalg.norm(zeros, ord=p, axis=-1)
    np.testing.assert_array_equal(norm.numpy(), np.linalg.norm(np.zeros((2, 3)), ord=p, axis=-1))
    grad = tl.grad(lambda t: tl.sum(tl.linalg.norm(t, ord=p, axis=-1)))(zeros)
    np.testing.assert_array_equal(grad.numpy(), np.zeros((2, 3)))


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("p", [0.5, 1.5, 3.0])
def test_vector_p_norm_values_and_gradients_elsewhere(p, keepdims):
    x = np.array([[0.5, -2.0, 1.0], [0.0, 0.0, 0.0], [3.0, 0.25, -1.0]])
    rows = [0, 2]  # the zero row's gradient is the convention tested above
    got = tl.linalg.norm(tl.tensor(x), ord=p, axis=1, keepdims=keepdims)
    want = np.linalg.norm(x, ord=p, axis=1, keepdims=keepdims)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-13)
    weights = np.array([1.0, 2.0, -0.5])
    grad = tl.grad(lambda t: tl.sum(tl.linalg.norm(t, ord=p, axis=1) * tl.tensor(weights)))(tl.tensor(x)).numpy()
    numeric = _central_differences(lambda v: np.sum(np.linalg.norm(v, ord=p, axis=1) * weights[rows]), x[rows])
    np.testing.assert_allclose(grad[rows], numeric, rtol=1e-6, atol=1e-8)


def test_vector_p_norm_of_an_empty_vector():
    for p in (3.0, -1.0):  # 0, and inf (1 / 0) for a negative order, as NumPy gives
        with np.errstate(divide="ignore"):
            want = np.linalg.norm(np.zeros((2, 0)), ord=p, axis=1)
            got = tl.linalg.norm(tl.tensor(np.zeros((2, 0))), ord=p, axis=1)
        np.testing.assert_array_equal(got.numpy(), want)


def test_vector_p_norm_gradient_at_zero_matches_torch():
    torch = pytest.importorskip("torch")
    for p in (0.5, 3.0):
        t = torch.zeros(4, dtype=torch.float64, requires_grad=True)
        torch.linalg.vector_norm(t, p).backward()
        ours = tl.grad(lambda v: tl.linalg.norm(v, ord=p))(tl.tensor(np.zeros(4)))
        np.testing.assert_array_equal(ours.numpy(), t.grad.numpy())


# ------------------------------------------------------------------ bools to the power of bools
@pytest.mark.parametrize("backend", ["numpy", "array_api_strict"])
@pytest.mark.parametrize("mode", [0, 1], ids=["eager", "traced"])
def test_power_and_remainder_of_bools_give_integers(mode, backend):
    # NumPy computes bool ** bool and bool % bool in int8, which tensorlib holds in int32.
    if backend != "numpy":
        pytest.importorskip(backend)
    a, b = np.array([True, False, True, False]), np.array([True, True, True, True])
    ta, tb = tl.tensor(a, backend=backend), tl.tensor(b, backend=backend)
    for op, reference in ((lambda u, v: u**v, np.power), (lambda u, v: u % v, np.remainder)):
        got = _modes(op)[mode](ta, tb)
        want = reference(a, b)
        assert got.dtype == tl.dtypes.of_array(want.dtype)
        np.testing.assert_array_equal(got.numpy(), want)


# ------------------------------------------------------------------ logsumexp with zero weights
@pytest.mark.parametrize("mode", [0, 1], ids=["eager", "traced"])
def test_logsumexp_drops_terms_of_weight_zero(mode):
    # SciPy's rule: a term whose weight b is 0 is left out, so x = inf there gives no 0 * inf = nan
    # (tensorlib returned nan where SciPy returns log(sum of the other terms)).
    x = np.array([[np.inf, 1.0, 2.0], [0.5, np.inf, -1.0]])
    b = np.array([[0.0, 1.0, 3.0], [2.0, 0.0, 1.0]])
    want = np.log(np.sum(np.where(b != 0, b * np.exp(np.where(b != 0, x, 0.0)), 0.0), axis=1))
    lse = _modes(lambda u, v: tl.logsumexp(u, axis=1, b=v))[mode]
    np.testing.assert_allclose(lse(tl.tensor(x), tl.tensor(b)).numpy(), want, rtol=1e-14)
    gx, gb = _modes(tl.grad(lambda u, v: tl.sum(tl.logsumexp(u, axis=1, b=v)), argnums=(0, 1)))[mode](
        tl.tensor(x), tl.tensor(b)
    )
    # Where the weight is not 0: d/dx = b exp(x - lse), d/db = exp(x - lse); the dropped terms get 0.
    kept = b != 0
    share = np.where(kept, np.exp(np.where(kept, x, 0.0) - want[:, None]), 0.0)
    np.testing.assert_allclose(gx.numpy(), b * share, rtol=1e-14)
    np.testing.assert_allclose(gb.numpy(), share, rtol=1e-14)


def test_logsumexp_zero_weights_match_scipy():
    scipy_special = pytest.importorskip("scipy.special")
    for x, b in (([np.inf, 1.0], [0.0, 1.0]), ([1.0, 2.0], [0.0, 0.0]), ([np.inf, 1.0, 2.0], [0.0, 1.0, -0.5])):
        with np.errstate(all="ignore"):
            want = scipy_special.logsumexp(x, b=b)
            got = tl.logsumexp(tl.tensor(np.array(x)), b=tl.tensor(np.array(b))).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-14)


# ------------------------------------------------------------------ complex decompositions: the message
@pytest.mark.parametrize(
    "decomposition",
    [
        lambda t: tl.linalg.eigh(t)[0],
        lambda t: tl.real(tl.linalg.cholesky(t)),
        lambda t: tl.linalg.svd(t, compute_uv=False),
        lambda t: tl.real(tl.linalg.qr(t)[1]),
        lambda t: tl.real(tl.linalg.pinv(t)),
    ],
    ids=["eigh", "cholesky", "svd", "qr", "pinv"],
)
def test_complex_decomposition_gradients_match_central_differences(decomposition):
    # The message used to stop mid-sentence ("...complex128); the forward value is"); then these gradients
    # raised TypeError; now they are JAX's (tests/test_complex.py compares with jax.grad).
    from tensorlib.testing import check_grads

    a = np.array([[2.0, 1j], [-1j, 3.0]])
    np.testing.assert_allclose(tl.linalg.eigh(tl.tensor(a))[0].numpy(), np.linalg.eigvalsh(a), rtol=1e-14)
    check_grads(lambda t: tl.sum(decomposition(t)), [tl.tensor(a)])


@pytest.mark.parametrize("mode", [0, 1], ids=["eager", "traced"])
def test_take_and_take_along_axis_with_empty_lists(mode):
    # The sibling paths of x[[]]: a Python [] became a float32 tensor, which the gathers rejected.
    x = np.arange(6.0).reshape(2, 3)
    cases = [
        (lambda t: tl.take(t, [], axis=1), lambda a: np.take(a, np.array([], int), axis=1)),
        (lambda t: tl.take(t, [[], []], axis=0), lambda a: np.take(a, np.zeros((2, 0), int), axis=0)),
        (lambda t: tl.gather(t, []), lambda a: np.take(a, np.array([], int), axis=0)),
        (lambda t: tl.take_along_axis(t, [[], []], axis=1), lambda a: np.take_along_axis(a, np.zeros((2, 0), int), 1)),
    ]
    for ours, reference in cases:
        got = _modes(ours)[mode](tl.tensor(x))
        assert got.shape == reference(x).shape and got.dtype == x.dtype
        grad = _modes(tl.grad(lambda t, ours=ours: tl.sum(ours(t))))[mode](tl.tensor(x))
        np.testing.assert_array_equal(grad.numpy(), np.zeros_like(x))

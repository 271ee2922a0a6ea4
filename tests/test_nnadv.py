"""tl.nn attacked as a PyTorch/Keras user would use it: PyTorch's losses that were missing
(binary_cross_entropy_with_logits, soft_margin_loss, margin_ranking_loss, hinge_embedding_loss,
gaussian_nll_loss, poisson_nll_loss), checked against their NumPy float64 formulas, float64 central differences
(tl.testing.check_grads, to second order), traced == eager, and torch.nn.functional where installed."""

import math

import numpy as np
import pytest

import tensorlib as tl

_RNG = np.random.default_rng(20261203)
_REDUCE = {"mean": np.mean, "sum": np.sum, "none": lambda v: v}


def _softplus(z):
    return np.logaddexp(z, 0.0)


def _bce_logits_ref(x, t, weight=None, pos_weight=None):
    pw = 1.0 if pos_weight is None else pos_weight
    loss = -(pw * t * -_softplus(-x) + (1 - t) * -_softplus(x))
    return loss if weight is None else loss * weight


def _gaussian_nll_ref(x, t, var, full=False, eps=1e-6):
    v = np.maximum(var, eps)
    return 0.5 * (np.log(v) + (x - t) ** 2 / v) + (0.5 * math.log(2 * math.pi) if full else 0.0)


def _poisson_nll_ref(x, t, log_input=True, full=False, eps=1e-8):
    loss = np.exp(x) - t * x if log_input else x - t * np.log(x + eps)
    if full:
        safe = np.where(t > 1, t, 2.0)
        loss = loss + np.where(t > 1, safe * np.log(safe) - safe + 0.5 * np.log(2 * math.pi * safe), 0.0)
    return loss


def _cases():
    x = _RNG.normal(size=(4, 5)) * 3
    probs = _RNG.uniform(size=(4, 5))
    signs = np.where(_RNG.uniform(size=(4, 5)) < 0.5, -1.0, 1.0)
    w, pw = _RNG.uniform(0.5, 2, size=(4, 5)), _RNG.uniform(0.5, 3, size=5)
    a, b = _RNG.normal(size=6), _RNG.normal(size=6)
    sign6 = np.where(_RNG.uniform(size=6) < 0.5, -1.0, 1.0)
    dist, hinge_t = np.abs(_RNG.normal(size=6)) + 0.1, np.array([1.0, -1.0, -1.0, 1.0, -1.0, -1.0])
    var, var_row = _RNG.uniform(0.2, 2, size=(4, 5)), _RNG.uniform(0.2, 2, size=4)
    rate, counts = _RNG.uniform(0.1, 2, size=(4, 5)), _RNG.integers(0, 6, size=(4, 5)).astype(float)
    return [
        # name, tensorlib call, NumPy formula (unreduced), differentiable arguments
        ("bce_logits", lambda r, x, t: tl.nn.binary_cross_entropy_with_logits(x, t, reduction=r),
         lambda x, t: _bce_logits_ref(x, t), (x, probs)),
        ("bce_logits_weights", lambda r, x, t: tl.nn.binary_cross_entropy_with_logits(x, t, w, r, pos_weight=pw),
         lambda x, t: _bce_logits_ref(x, t, w, pw), (x, probs)),
        ("soft_margin", lambda r, x, t: tl.nn.soft_margin_loss(x, t, r),
         lambda x, t: _softplus(-t * x), (x, signs)),
        ("margin_ranking", lambda r, a, b: tl.nn.margin_ranking_loss(a, b, sign6, 0.3, r),
         lambda a, b: np.maximum(0.3 - sign6 * (a - b), 0.0), (a, b)),
        ("hinge_embedding", lambda r, d: tl.nn.hinge_embedding_loss(d, hinge_t, 1.5, r),
         lambda d: np.where(hinge_t == 1, d, np.maximum(1.5 - d, 0.0)), (dist,)),
        ("gaussian_nll", lambda r, x, t, v: tl.nn.gaussian_nll_loss(x, t, v, full=True, reduction=r),
         lambda x, t, v: _gaussian_nll_ref(x, t, v, full=True), (x, probs, var)),
        ("gaussian_nll_row_var", lambda r, x, t, v: tl.nn.gaussian_nll_loss(x, t, v, reduction=r),
         lambda x, t, v: _gaussian_nll_ref(x, t, v[:, None]), (x, probs, var_row)),
        ("poisson_nll", lambda r, x: tl.nn.poisson_nll_loss(x, counts, full=True, reduction=r),
         lambda x: _poisson_nll_ref(x, counts, full=True), (x / 3,)),
        ("poisson_nll_rate", lambda r, x: tl.nn.poisson_nll_loss(x, counts, log_input=False, reduction=r),
         lambda x: _poisson_nll_ref(x, counts, log_input=False), (rate,)),
    ]  # fmt: skip


_CASES = _cases()


@pytest.mark.parametrize("case", _CASES, ids=[c[0] for c in _CASES])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_pytorch_losses_match_their_formulas_and_differentiate(case, reduction):
    _, call, formula, args = case
    ref = _REDUCE[reduction](formula(*args))
    np.testing.assert_allclose(call(reduction, *args).numpy(), ref, rtol=1e-13, atol=1e-14)
    traced = tl.function(lambda *xs: call(reduction, *xs))
    np.testing.assert_allclose(traced(*args).numpy(), ref, rtol=1e-13, atol=1e-14)
    tl.testing.check_grads(lambda *xs: call(reduction, *xs), args, order=2, modes=("rev",))


def test_binary_cross_entropy_with_logits_is_finite_at_extreme_logits():
    x, t = np.array([1e4, -1e4, 0.0, 30.0]), np.array([0.0, 1.0, 1.0, 1.0])
    loss = tl.nn.binary_cross_entropy_with_logits(x, t, reduction="none", pos_weight=2.0)
    np.testing.assert_allclose(loss.numpy(), [1e4, 2e4, 2 * math.log(2), 2 * math.log1p(math.exp(-30))], rtol=1e-14)
    grad = tl.grad(lambda a: tl.nn.binary_cross_entropy_with_logits(a, t, reduction="sum"))(tl.tensor(x))
    np.testing.assert_allclose(grad.numpy(), 1 / (1 + np.exp(-x)) - t, rtol=1e-14)  # sigmoid(x) - t


def test_soft_margin_loss_does_not_overflow():
    loss = tl.nn.soft_margin_loss(np.array([-1e4, 1e4]), np.array([1.0, -1.0]), reduction="none")
    assert loss.numpy().tolist() == [1e4, 1e4]
    grad = tl.grad(lambda a: tl.nn.soft_margin_loss(a, np.array([1.0, -1.0]), reduction="sum"))
    assert grad(tl.tensor([-1e4, 1e4])).numpy().tolist() == [-1.0, 1.0]


def test_ranking_and_hinge_losses_take_pytorchs_derivative_at_the_kink():
    # PyTorch's clamp_min passes the gradient at max(z, 0)'s kink z = 0
    grad = tl.grad(lambda a: tl.nn.margin_ranking_loss(a, np.ones(1), np.ones(1), reduction="sum"))
    assert grad(tl.tensor([1.0])).numpy().tolist() == [-1.0]
    grad = tl.grad(lambda d: tl.nn.hinge_embedding_loss(d, -np.ones(1), 1.0, reduction="sum"))
    assert grad(tl.tensor([1.0])).numpy().tolist() == [-1.0]


def test_gaussian_nll_loss_clamps_the_value_of_var_only():
    x, t, v = np.array([1.0]), np.array([0.0]), np.array([1e-9])
    loss = tl.nn.gaussian_nll_loss(x, t, v, reduction="sum")
    np.testing.assert_allclose(float(loss), 0.5 * (math.log(1e-6) + 1e6), rtol=1e-14)
    grad = tl.grad(lambda var: tl.nn.gaussian_nll_loss(x, t, var, reduction="sum"))(tl.tensor(v))
    np.testing.assert_allclose(grad.numpy(), 0.5 * (1 / 1e-6 - 1 / 1e-12), rtol=1e-12)  # d/dvar at the clamp


def test_poisson_nll_loss_full_has_a_finite_gradient_at_zero_counts():
    counts = tl.tensor(np.array([0.0, 1.0, 3.0]))
    grad = tl.grad(lambda c: tl.nn.poisson_nll_loss(np.full(3, 0.5), c, full=True, reduction="sum"))
    ref = np.array([-0.5, -0.5, -0.5 + math.log(3.0) + 0.5 / 3.0])  # -x, plus the Stirling term's above 1
    np.testing.assert_allclose(grad(counts).numpy(), ref, rtol=1e-14)


def test_new_losses_keep_float16_and_round_once():
    x = (_RNG.normal(size=200) * 4).astype(np.float16)
    t = _RNG.uniform(size=200).astype(np.float16)
    got = tl.nn.binary_cross_entropy_with_logits(x, t)
    assert got.dtype == np.float16
    ref = _bce_logits_ref(x.astype(np.float64), t.astype(np.float64)).mean()
    assert abs(float(got) - ref) <= np.spacing(np.float16(ref))


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: tl.nn.binary_cross_entropy_with_logits(np.zeros(3), np.zeros((1, 3))), r"target shape \(1, 3\)"),
        (lambda: tl.nn.binary_cross_entropy_with_logits(np.zeros(3), np.zeros(3), pos_weight=np.ones(2)),
         r"pos_weight shape \(2,\)"),
        (lambda: tl.nn.gaussian_nll_loss(np.zeros((2, 3)), np.zeros((2, 3)), np.ones(3)), r"var shape \(3,\)"),
        (lambda: tl.nn.gaussian_nll_loss(np.zeros(2), np.zeros(2), np.array([1.0, -1.0])), "negative"),
        (lambda: tl.nn.soft_margin_loss(np.zeros(2), np.zeros(2), "avg"), "soft_margin_loss: reduction"),
        (lambda: tl.nn.margin_ranking_loss(np.zeros(2), np.zeros(3), np.ones(2)), "margin_ranking_loss"),
    ],
)  # fmt: skip
def test_bad_inputs_of_the_new_losses_raise_one_clear_error(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_new_losses_match_pytorch():
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    x, t = _RNG.normal(size=(3, 4)) * 3, _RNG.uniform(size=(3, 4))
    w, pw = _RNG.uniform(size=(3, 4)), _RNG.uniform(0.5, 3, size=4)
    v = _RNG.uniform(0.1, 2, size=(3, 1))
    sign = np.where(t < 0.5, -1.0, 1.0)
    counts = _RNG.integers(0, 5, size=(3, 4)).astype(float)
    T = torch.tensor
    pairs = [
        (tl.nn.binary_cross_entropy_with_logits(x, t, w, "sum", pw),
         F.binary_cross_entropy_with_logits(T(x), T(t), T(w), reduction="sum", pos_weight=T(pw))),
        (tl.nn.soft_margin_loss(x, sign), F.soft_margin_loss(T(x), T(sign))),
        (tl.nn.margin_ranking_loss(x, t, sign, 0.2), F.margin_ranking_loss(T(x), T(t), T(sign), 0.2)),
        (tl.nn.hinge_embedding_loss(np.abs(x), sign, 2.0), F.hinge_embedding_loss(T(np.abs(x)), T(sign), 2.0)),
        (tl.nn.gaussian_nll_loss(x, t, v, full=True), F.gaussian_nll_loss(T(x), T(t), T(v), full=True)),
        (tl.nn.poisson_nll_loss(x, counts, full=True), F.poisson_nll_loss(T(x), T(counts), full=True)),
        (tl.nn.poisson_nll_loss(np.abs(x), counts, False), F.poisson_nll_loss(T(np.abs(x)), T(counts), False)),
    ]  # fmt: skip
    for ours, theirs in pairs:
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-13)


# ------------------------------------------------------------------ max pooling with explicit padding
def _max_pool_ref(x, ksize, strides, pads):
    """Channels-last max pooling by loops over the windows of x padded with -inf."""
    padded = np.pad(x, [(0, 0), *pads, (0, 0)], constant_values=-np.inf)
    spatial = padded.shape[1:-1]
    out = [(n - k) // s + 1 for n, k, s in zip(spatial, ksize, strides)]
    y = np.empty((x.shape[0], *out, x.shape[-1]))
    for index in np.ndindex(*out):
        window = tuple(slice(i * s, i * s + k) for i, k, s in zip(index, ksize, strides))
        y[(slice(None), *index)] = padded[(slice(None), *window)].max(axis=tuple(range(1, len(out) + 1)))
    return y


_MAX_POOLS = {
    1: lambda x, k, s, p, fmt="NWC": tl.nn.max_pool1d(x, k[0], s[0], p[0], data_format=fmt),
    2: lambda x, k, s, p, fmt="NHWC": tl.nn.max_pool(x, k, s, p, data_format=fmt),
    3: lambda x, k, s, p, fmt="NDHWC": tl.nn.max_pool3d(x, k, s, p, data_format=fmt),
}


@pytest.mark.parametrize("rank", [1, 2, 3])
def test_max_pool_takes_explicit_padding(rank):
    rng = np.random.default_rng(rank)
    for _ in range(4):
        spatial = tuple(int(v) for v in rng.integers(2, 7, rank))
        ksize = tuple(int(v) for v in rng.integers(2, 4, rank))
        strides = tuple(int(v) for v in rng.integers(1, 3, rank))
        pads = tuple(tuple(int(v) for v in rng.integers(0, k, 2)) for k in ksize)  # asymmetric, each < k
        x = rng.permutation(np.arange(2.0 * np.prod(spatial) * 2)).reshape(2, *spatial, 2)  # no ties
        pool = _MAX_POOLS[rank]
        ref = _max_pool_ref(x, ksize, strides, pads)
        np.testing.assert_array_equal(pool(x, ksize, strides, pads).numpy(), ref)
        traced = tl.function(lambda a: pool(a, ksize, strides, pads))
        np.testing.assert_array_equal(traced(x).numpy(), ref)
        tl.testing.check_grads(lambda a: pool(a, ksize, strides, pads), (x,), order=2, modes=("rev",))
        first = np.moveaxis(x, -1, 1)  # channels-first gives the same windows
        fmt = {1: "NCW", 2: "NCHW", 3: "NCDHW"}[rank]
        np.testing.assert_array_equal(np.moveaxis(pool(first, ksize, strides, pads, fmt).numpy(), 1, -1), ref)


def test_max_pool_explicit_padding_in_tensorflows_four_pair_forms_and_the_layer():
    x = np.random.default_rng(7).normal(size=(2, 5, 6, 3))
    ref = _max_pool_ref(x, (3, 3), (2, 2), ((1, 1), (1, 0)))
    nhwc = tl.nn.max_pool(x, 3, 2, [[0, 0], [1, 1], [1, 0], [0, 0]])
    nchw = tl.nn.max_pool(x.transpose(0, 3, 1, 2), 3, 2, [[0, 0], [0, 0], [1, 1], [1, 0]], data_format="NCHW")
    layer = tl.nn.MaxPool2D(3, 2, padding=((1, 1), (1, 0)))
    for got in (nhwc.numpy(), nchw.numpy().transpose(0, 2, 3, 1), layer(x).numpy()):
        np.testing.assert_array_equal(got, ref)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda x: tl.nn.max_pool(x, 2, 1, ((2, 0), (0, 0))), r"MaxPool: each explicit padding must be smaller"),
        (lambda x: tl.nn.max_pool3d(x[..., None], 2, 1, ((0, 2), (0, 0), (0, 0))), r"max_pool3d: each explicit"),
        (lambda x: tl.nn.avg_pool(x, 2, 1, ((1, 1), (1, 1))), r"AvgPool: padding must be 'VALID' or 'SAME'"),
        (lambda x: tl.nn.max_pool(x, 2, 1, ((1, -1), (0, 0))), r"MaxPool: padding must be"),
    ],
)
def test_max_pool_explicit_padding_errors(call, match):
    x = np.ones((1, 4, 4, 1))
    with pytest.raises(ValueError, match=match):
        call(x)


def test_max_pool_explicit_padding_matches_pytorch():
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    x = np.random.default_rng(8).normal(size=(2, 3, 7, 6, 5))
    for rank, function in ((1, F.max_pool1d), (2, F.max_pool2d), (3, F.max_pool3d)):
        first = x[(slice(None), slice(None), *[0] * (3 - rank))]
        ksize, strides, pad = (3,) * rank, (2,) * rank, (1,) * rank
        theirs = function(torch.tensor(first), ksize, strides, pad).numpy()
        fmt = {1: "NCW", 2: "NCHW", 3: "NCDHW"}[rank]
        ours = _MAX_POOLS[rank](first, ksize, strides, ((1, 1),) * rank, fmt)
        np.testing.assert_array_equal(ours.numpy(), theirs)


# ------------------------------------------------------------------ grouped convolution layers
def _grouped_conv_ref(x, kernel, groups):
    """Channels-last VALID stride-1 convolution by loops, input channel group g with output channel group g."""
    rank = x.ndim - 2
    k = kernel.shape[:rank]
    out = tuple(n - m + 1 for n, m in zip(x.shape[1:-1], k))
    cin, cout = kernel.shape[-2], kernel.shape[-1] // groups
    y = np.zeros((x.shape[0], *out, kernel.shape[-1]))
    for g in range(groups):
        xs, ks = x[..., g * cin : (g + 1) * cin], kernel[..., g * cout : (g + 1) * cout]
        for tap in np.ndindex(*k):
            window = tuple(slice(t, t + n) for t, n in zip(tap, out))
            y[..., g * cout : (g + 1) * cout] += np.einsum("n...i,io->n...o", xs[(slice(None), *window)], ks[tap])
    return y


@pytest.mark.parametrize("rank, groups", [(1, 2), (2, 3), (2, 6), (3, 2)])
def test_conv_layers_take_groups(rank, groups):
    layer_type = {1: tl.nn.Conv1D, 2: tl.nn.Conv2D, 3: tl.nn.Conv3D}[rank]
    layer = layer_type(6, 12, kernel_size=2, padding="VALID", groups=groups, seed=1, dtype=tl.float64)
    assert layer.kernel.shape == (2,) * rank + (6 // groups, 12)
    x = np.random.default_rng(rank).normal(size=(2, *(4,) * rank, 6))
    ref = _grouped_conv_ref(x, layer.kernel.numpy(), groups) + layer.bias.numpy()
    np.testing.assert_allclose(layer(x).numpy(), ref, rtol=1e-13, atol=1e-13)
    first = {1: "NCW", 2: "NCHW", 3: "NCDHW"}[rank]
    layer_first = layer_type(6, 12, 2, padding="VALID", groups=groups, seed=1, dtype=tl.float64, data_format=first)
    got = np.moveaxis(layer_first(np.moveaxis(x, -1, 1)).numpy(), 1, -1)
    np.testing.assert_allclose(got, ref, rtol=1e-13, atol=1e-13)
    traced = tl.function(lambda a: layer(a))
    np.testing.assert_allclose(traced(x).numpy(), ref, rtol=1e-13, atol=1e-13)
    tl.testing.check_grads(lambda a: layer(a), (x,), modes=("rev",))
    cotangent = np.random.default_rng(0).normal(size=ref.shape)
    with tl.GradientTape() as tape:
        loss = tl.sum(layer(x) * cotangent)
    got = tape.gradient(loss, layer.kernel).numpy()
    # the loss is linear in the kernel: its gradient is each tap's window of x against the cotangent, per group
    cin, cout = 6 // groups, 12 // groups
    want = np.zeros(layer.kernel.shape)
    for tap in np.ndindex(*(2,) * rank):
        window = x[(slice(None), *(slice(t, t + n) for t, n in zip(tap, ref.shape[1:-1])))]
        for g in range(groups):
            xs = window[..., g * cin : (g + 1) * cin].reshape(-1, cin)
            want[tap][:, g * cout : (g + 1) * cout] = xs.T @ cotangent[..., g * cout : (g + 1) * cout].reshape(-1, cout)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_conv_groups_that_do_not_divide_the_channels_raise():
    with pytest.raises(ValueError, match=r"Conv2D: groups=4 must divide in_channels=6 and out_channels=8"):
        tl.nn.Conv2D(6, 8, 3, groups=4)
    with pytest.raises(ValueError, match=r"Conv1D: groups must be"):
        tl.nn.Conv1D(6, 8, 3, groups=0)


def test_grouped_conv_matches_pytorch():
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(9).normal(size=(2, 6, 7, 5))
    layer = tl.nn.Conv2D(
        6, 9, 3, strides=2, padding=((1, 1), (1, 1)), groups=3, seed=2, dtype=tl.float64, data_format="NCHW"
    )
    weight = torch.tensor(layer.kernel.numpy().transpose(3, 2, 0, 1))
    theirs = torch.nn.functional.conv2d(torch.tensor(x), weight, torch.tensor(layer.bias.numpy()), 2, 1, groups=3)
    np.testing.assert_allclose(layer(x).numpy(), theirs.numpy(), rtol=1e-13, atol=1e-13)

"""PyTorch's loss functions in tl.nn: NumPy formulas, float64 differences (to second order), traced == eager,
and PyTorch's own values and gradients when it is installed."""

import itertools

import numpy as np
import pytest

import tensorlib as tl

RNG = np.random.default_rng(0)


def _reduce(loss, reduction):
    return {"mean": loss.mean(), "sum": loss.sum(), "none": loss}[reduction]


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_regression_losses_match_their_formulas(reduction):
    x, y = RNG.normal(size=(4, 3)) * 2, RNG.normal(size=(4, 3))
    d = x - y
    huber = np.where(np.abs(d) < 1.5, 0.5 * d**2, 1.5 * (np.abs(d) - 0.75))
    cases = [
        (tl.nn.mse_loss(x, y, reduction), d**2),
        (tl.nn.l1_loss(x, y, reduction), np.abs(d)),
        (tl.nn.huber_loss(x, y, reduction, delta=1.5), huber),
        (tl.nn.smooth_l1_loss(x, y, reduction, beta=1.5), huber / 1.5),
        (tl.nn.smooth_l1_loss(x, y, reduction, beta=0.0), np.abs(d)),
    ]
    for got, loss in cases:
        np.testing.assert_allclose(got.numpy(), _reduce(loss, reduction), rtol=1e-12)
    p = 1 / (1 + np.exp(-x))
    bce = -(y * np.log(p) + (1 - y) * np.log(1 - p))
    np.testing.assert_allclose(tl.nn.binary_cross_entropy(p, y, reduction=reduction).numpy(), _reduce(bce, reduction))
    logq, target = np.log(p / p.sum(1, keepdims=True)), np.abs(y) / np.abs(y).sum(1, keepdims=True)
    kl = target * (np.log(target) - logq)
    np.testing.assert_allclose(tl.nn.kl_div(logq, target, reduction).numpy(), _reduce(kl, reduction))


def test_losses_are_differentiable_to_second_order_and_trace():
    x, y = tl.tensor(RNG.normal(size=(3, 4))), tl.tensor(RNG.normal(size=(3, 4)))
    labels = tl.tensor(np.array([0, 3, 1]))
    p = tl.tensor(RNG.uniform(0.1, 0.9, size=(3, 4)))
    for f, args in [
        (lambda a, b: tl.nn.mse_loss(a, b), (x, y)),
        (lambda a, b: tl.nn.huber_loss(a * 3, b, delta=1.0), (x, y)),
        (lambda a, b: tl.nn.binary_cross_entropy(a, b, reduction="sum"), (p, tl.tensor(np.abs(y.numpy()) % 1))),
        (lambda a: tl.nn.cross_entropy(a, labels, label_smoothing=0.2, weight=tl.tensor([1.0, 2, 3, 4])), (x,)),
        (lambda a, b: tl.nn.cosine_similarity(a, b), (x, y)),
        (lambda a, b: tl.nn.kl_div(tl.nn.log_softmax(a, 1), tl.nn.softmax(b, 1), "batchmean"), (x, y)),
    ]:
        tl.testing.check_grads(f, args, order=2)
        np.testing.assert_allclose(tl.function(f)(*args).numpy(), f(*args).numpy(), rtol=1e-12)


def test_cross_entropy_and_nll_follow_pytorchs_rules():
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    for shape, weighted, ignore, smoothing, reduction, probs in itertools.product(
        [(5, 4), (3, 4, 2, 2), (4,)], [False, True], [False, True], [0.0, 0.3], ["mean", "sum", "none"], [False, True]
    ):
        x = RNG.normal(size=shape) * 3
        classes = shape[1] if len(shape) > 1 else shape[0]
        target_shape = (shape[0], *shape[2:]) if len(shape) > 1 else ()
        if probs:
            target = RNG.dirichlet(np.ones(classes), size=int(np.prod(target_shape, dtype=int)))
            target = np.moveaxis(target.reshape(*target_shape, classes), -1, 1 if len(shape) > 1 else 0)
        else:
            target = RNG.integers(0, classes, size=target_shape)
            if ignore and target.size:
                target.flat[0] = -100
        weight = RNG.uniform(0.5, 2.0, size=classes) if weighted else None
        tw = None if weight is None else torch.tensor(weight)
        tx = torch.tensor(x, requires_grad=True)
        expected = F.cross_entropy(tx, torch.tensor(target), weight=tw, reduction=reduction, label_smoothing=smoothing)
        expected.sum().backward()
        xt = tl.tensor(x)
        got, grad = tl.value_and_grad(
            lambda a: tl.sum(
                tl.nn.cross_entropy(a, target, weight=weight, reduction=reduction, label_smoothing=smoothing)
            )
        )(xt)
        got = tl.nn.cross_entropy(xt, target, weight=weight, reduction=reduction, label_smoothing=smoothing)
        case = f"{shape} weighted={weighted} ignore={ignore} smoothing={smoothing} {reduction} probs={probs}"
        np.testing.assert_allclose(got.numpy(), expected.detach().numpy(), rtol=1e-10, err_msg=case)
        np.testing.assert_allclose(grad.numpy(), tx.grad.numpy(), rtol=1e-9, atol=1e-12, err_msg=case)
        if not probs and not smoothing:
            logp = F.log_softmax(torch.tensor(x), dim=1 if len(shape) > 1 else 0).numpy()
            nll = F.nll_loss(torch.tensor(logp), torch.tensor(target), weight=tw, reduction=reduction)
            np.testing.assert_allclose(
                tl.nn.nll_loss(logp, target, weight=weight, reduction=reduction).numpy(), nll.numpy(), rtol=1e-10
            )


def test_pointwise_losses_match_pytorch_values_and_gradients():
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    x, y = RNG.normal(size=(6, 5)), RNG.normal(size=(6, 5))
    p, t = RNG.uniform(0.001, 0.999, size=(6, 5)), RNG.uniform(size=(6, 5))
    p[0, :2] = [0.0, 1.0]  # the clamped logs
    for ours, theirs, a, b in [
        (lambda a, b: tl.nn.mse_loss(a, b), F.mse_loss, x, y),
        (lambda a, b: tl.nn.l1_loss(a, b, "sum"), lambda a, b: F.l1_loss(a, b, reduction="sum"), x, y),
        (lambda a, b: tl.nn.huber_loss(a, b, delta=0.7), lambda a, b: F.huber_loss(a, b, delta=0.7), x, y),
        (lambda a, b: tl.nn.smooth_l1_loss(a, b, beta=0.4), lambda a, b: F.smooth_l1_loss(a, b, beta=0.4), x, y),
        (lambda a, b: tl.nn.binary_cross_entropy(a, b), F.binary_cross_entropy, p[1:], t[1:]),
        (lambda a, b: tl.nn.kl_div(a, b, "batchmean"), lambda a, b: F.kl_div(a, b, reduction="batchmean"), x, t),
        (lambda a, b: tl.nn.kl_div(a, b, log_target=True), lambda a, b: F.kl_div(a, b, log_target=True), x, y),
        (lambda a, b: tl.nn.cosine_similarity(a, b, axis=0), lambda a, b: F.cosine_similarity(a, b, dim=0), x, y),
    ]:
        ta, tb = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
        expected = theirs(ta, tb)
        expected.sum().backward()
        value, (ga, gb) = tl.value_and_grad(lambda u, v: tl.sum(ours(u, v)), argnums=(0, 1))(tl.tensor(a), tl.tensor(b))
        np.testing.assert_allclose(value.numpy(), expected.sum().detach().numpy(), rtol=1e-10)
        np.testing.assert_allclose(ga.numpy(), ta.grad.numpy(), rtol=1e-9, atol=1e-14)
        np.testing.assert_allclose(gb.numpy(), tb.grad.numpy(), rtol=1e-9, atol=1e-14)
    # probabilities 0 and 1: PyTorch's clamped loss (its gradient there, -1/1e-12, is left aside)
    bce = F.binary_cross_entropy(torch.tensor(p), torch.tensor(t)).item()
    assert np.isclose(float(tl.nn.binary_cross_entropy(p, t)), bce, rtol=1e-12)
    z = np.zeros((1, 3))
    np.testing.assert_array_equal(
        tl.grad(lambda a: tl.sum(tl.nn.cosine_similarity(a, tl.tensor(np.ones((1, 3))))))(tl.tensor(z)).numpy(),
        np.ones((1, 3)) / np.sqrt(3) / 1e-8,  # PyTorch's gradient at a zero vector (finite: |a| is clamped to eps)
    )


@pytest.mark.parametrize(
    ("call", "exc", "match"),
    [
        (lambda: tl.nn.mse_loss(np.ones(3), np.ones(4)), ValueError, r"mse_loss: input shape \(3,\) .* do not broad"),
        (lambda: tl.nn.mse_loss(np.ones(3), np.ones(3), "avg"), ValueError, "reduction must be one of"),
        (lambda: tl.nn.huber_loss(np.ones(3), np.ones(3), delta=0), ValueError, "delta must be positive"),
        (lambda: tl.nn.binary_cross_entropy(np.array([1.5]), np.ones(1)), ValueError, r"probabilities in \[0, 1\]"),
        (lambda: tl.nn.cross_entropy(np.ones((2, 3)), np.array([0, 3])), ValueError, r"outside \[0, 3\)"),
        (lambda: tl.nn.cross_entropy(np.ones((2, 3)), np.array([0.5, 1.0])), ValueError, "probability targets"),
        (lambda: tl.nn.nll_loss(np.ones((2, 3)), np.array([0, 1, 2])), ValueError, "target shape"),
        (lambda: tl.nn.nll_loss(np.ones((2, 3)), np.array([0, 1]), weight=np.ones(2)), ValueError, "weight must"),
        (lambda: tl.nn.cross_entropy(np.ones((2, 3)), np.array([0, 1]), label_smoothing=2), ValueError, "smoothing"),
    ],
)
def test_bad_loss_inputs_raise_one_clear_error(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


# ------------------------------------------------------------------ ctc_loss
def _ctc_brute_force(log_probs, target, frames, blank=0):
    """-log of the summed probability of every path of ``frames`` frames that collapses to ``target``."""
    total = 0.0
    for path in itertools.product(range(log_probs.shape[1]), repeat=frames):
        collapsed = [c for i, c in enumerate(path) if c != blank and (i == 0 or c != path[i - 1])]
        if collapsed == list(target):
            total += np.exp(sum(log_probs[t, c] for t, c in enumerate(path)))
    return -np.log(total)


def test_ctc_loss_sums_the_probability_of_every_alignment():
    logits = RNG.normal(size=(4, 3, 3))
    log_probs = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    targets, target_lengths, input_lengths = np.array([[1, 1], [2, 1], [2, 0]]), [2, 2, 1], [4, 3, 2]
    expected = [_ctc_brute_force(log_probs[:, n], targets[n, : target_lengths[n]], input_lengths[n]) for n in range(3)]
    got = tl.nn.ctc_loss(log_probs, targets, input_lengths, target_lengths, reduction="none")
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-12)
    concatenated = np.array([1, 1, 2, 1, 2])  # PyTorch's 1-D form
    np.testing.assert_allclose(
        tl.nn.ctc_loss(log_probs, concatenated, input_lengths, target_lengths).numpy(),
        np.mean(np.array(expected) / np.array(target_lengths)),
        rtol=1e-12,
    )
    # [1, 1] needs a blank between the repeats: 3 frames at least
    one = log_probs[:, :1]
    assert float(tl.nn.ctc_loss(one, [[1, 1]], [2], [2], reduction="sum")) == np.inf
    assert float(tl.nn.ctc_loss(one, [[1, 1]], [2], [2], zero_infinity=True)) == 0.0
    g = tl.grad(lambda lp: tl.nn.ctc_loss(lp, [[1, 1]], [2], [2], zero_infinity=True))(tl.tensor(one))
    np.testing.assert_array_equal(g.numpy(), 0.0)
    tl.testing.check_grads(
        lambda lp: tl.nn.ctc_loss(lp, targets, input_lengths, target_lengths), (tl.tensor(log_probs),)
    )
    traced = tl.function(lambda lp: tl.nn.ctc_loss(lp, targets, input_lengths, target_lengths, reduction="sum"))
    np.testing.assert_allclose(float(traced(tl.tensor(log_probs))), np.sum(expected), rtol=1e-12)


def test_ctc_loss_matches_pytorch_through_log_softmax():
    torch = pytest.importorskip("torch")
    # PyTorch's gradient with respect to log_probs is the one through log_softmax (exp(lp) - occupancy), not
    # the partial derivative: compare from the logits.
    for _ in range(20):
        frames, batch, classes, longest = RNG.integers(1, 8), RNG.integers(1, 4), RNG.integers(2, 6), RNG.integers(0, 5)
        target_lengths = RNG.integers(0, longest + 1, size=batch)
        input_lengths = RNG.integers(0, frames + 1, size=batch)
        targets = RNG.integers(1, classes, size=(batch, max(longest, 1)))
        logits = RNG.normal(size=(frames, batch, classes))
        for reduction in ("none", "sum", "mean"):
            x = torch.tensor(logits, requires_grad=True)
            args = (torch.tensor(targets), torch.tensor(input_lengths), torch.tensor(target_lengths))
            ref = torch.nn.functional.ctc_loss(torch.log_softmax(x, -1), *args, reduction=reduction, zero_infinity=True)
            ref.sum().backward()

            def ours(z):
                lp = tl.nn.log_softmax(z, -1)
                return tl.nn.ctc_loss(
                    lp, targets, input_lengths, target_lengths, reduction=reduction, zero_infinity=True
                )

            value, grad = tl.value_and_grad(lambda z: tl.sum(ours(z)))(tl.tensor(logits))
            np.testing.assert_allclose(ours(tl.tensor(logits)).numpy(), ref.detach().numpy(), rtol=1e-9, atol=1e-12)
            np.testing.assert_allclose(grad.numpy(), x.grad.numpy(), rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: tl.nn.ctc_loss(np.zeros((3, 2)), [[1]], [3], [1]), r"log_probs must be \(T, N, C\)"),
        (lambda: tl.nn.ctc_loss(np.zeros((3, 1, 2)), [[1]], [4], [1]), r"input_lengths must be in \[0, T=3\]"),
        (lambda: tl.nn.ctc_loss(np.zeros((3, 1, 2)), [[2]], [3], [1]), r"class indices outside \[0, 2\)"),
        (lambda: tl.nn.ctc_loss(np.zeros((3, 1, 2)), [1, 1], [3], [1]), "1-D targets hold 2 labels"),
        (lambda: tl.nn.ctc_loss(np.zeros((3, 1, 2)), [[1]], [3], [1], blank=2), "blank=2 is not a class index"),
    ],
)
def test_bad_ctc_inputs_raise_one_clear_error(call, match):
    with pytest.raises(ValueError, match=match):
        call()

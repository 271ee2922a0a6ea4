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

"""Edge cases of the user toolkit (modules, layers, optimizers, checkpoints) found by adversarial probing."""

import numpy as np
import pytest

import tensorlib as tl


def _adam_reference(w, grads, lr=0.1, b1=0.9, b2=0.999, eps=1e-8):
    """torch.optim.Adam's formulas in NumPy; a None gradient skips the step (and its count) for that variable."""
    w, m, v, t = np.array(w, np.float64), np.zeros_like(w), np.zeros_like(w), 0
    for g in grads:
        if g is None:
            continue
        t += 1
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        w = w - lr * (m / (1 - b1**t)) / (np.sqrt(v / (1 - b2**t)) + eps)
    return w


@pytest.mark.parametrize("cls", [tl.optimizers.Adam, tl.optimizers.AdamW])
def test_adam_bias_correction_counts_each_variables_own_steps(cls):
    rng = np.random.default_rng(0)
    a0, b0 = rng.standard_normal(3), rng.standard_normal(2)
    a, b = tl.Variable(a0), tl.Variable(b0)
    ga = [None, None, rng.standard_normal(3), rng.standard_normal(3)]
    gb = [rng.standard_normal(2) for _ in ga]
    opt = cls(0.1, weight_decay=0.0)
    for x, y in zip(ga, gb):
        opt.apply([None if x is None else tl.tensor(x), tl.tensor(y)], [a, b])
    np.testing.assert_allclose(a.numpy(), _adam_reference(a0, ga), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(b.numpy(), _adam_reference(b0, gb), rtol=1e-12, atol=1e-14)
    assert int(opt.iterations.numpy()) == 4


def test_adam_matches_torch_with_missing_gradients():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    w0 = rng.standard_normal((2, 3))
    grads = [None if k in (0, 2) else rng.standard_normal((2, 3)) for k in range(5)]
    w, p = tl.Variable(w0), torch.nn.Parameter(torch.tensor(w0))
    ours, theirs = tl.optimizers.Adam(0.05, weight_decay=0.1), torch.optim.Adam([p], lr=0.05, weight_decay=0.1)
    other = tl.Variable(np.zeros(1))  # keeps our optimizer's global step moving while w gets no gradient
    for g in grads:
        ours.apply([None if g is None else tl.tensor(g), tl.tensor(np.ones(1))], [w, other])
        if g is not None:
            p.grad = torch.tensor(g)
            theirs.step()
    np.testing.assert_allclose(w.numpy(), p.detach().numpy(), rtol=1e-12, atol=1e-14)


class _Shared(tl.Module):
    """One Dense layer reachable as both ``a`` and ``b`` (weight tying)."""

    def __init__(self):
        super().__init__()
        self.a = self.b = tl.nn.Dense(2, 2, seed=0, dtype=tl.float64)

    def forward(self, x):
        return self.b(self.a(x))


@pytest.mark.parametrize(
    "make", [lambda: tl.optimizers.SGD(0.1, momentum=0.9), tl.optimizers.Adam, tl.optimizers.RMSprop]
)
def test_a_shared_variable_is_updated_once_per_step(make):
    model, twin = _Shared(), tl.nn.Dense(2, 2, seed=0, dtype=tl.float64)
    x = tl.tensor(np.array([[0.5, -1.0]]))
    opt, twin_opt = make(), make()
    for _ in range(3):
        with tl.GradientTape() as tape:
            loss = tl.sum(model(x) ** 2)
        grads = tape.gradient(loss, model.trainable_variables)
        # The reference: the same update on an unshared copy, given the (full) gradient once.
        before = {k: v.numpy().copy() for k, v in model.a.trainable_variables.items()}
        for k, v in twin.trainable_variables.items():
            v.assign(before[k])
        twin_opt.apply(grads["a"], twin.trainable_variables)
        opt.apply(grads, model.trainable_variables)
        for k, v in twin.trainable_variables.items():
            np.testing.assert_allclose(model.a.trainable_variables[k].numpy(), v.numpy(), rtol=1e-12)


def test_num_parameters_counts_a_shared_variable_once():
    assert _Shared().num_parameters() == 2 * 2 + 2


@pytest.mark.parametrize("shape, expected", [((2, 0, 3), (2, 0)), ((0, 3, 4), (0, 12)), ((3, 2, 2), (3, 4))])
def test_flatten_zero_size_dimensions(shape, expected):
    assert tl.nn.Flatten()(tl.ones(shape)).shape == expected

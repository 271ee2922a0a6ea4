"""The nn functions a PyTorch or Keras user still missed, attacked as such a user would call them.

References: NumPy formulas in float64 written from PyTorch's documentation (loops over classes and samples
where PyTorch defines a sum), float64 central differences (``tl.testing.check_grads``), and, where installed,
PyTorch's ``torch.nn.functional`` in float64 (values and gradients).  Every torch check has a NumPy twin that
runs without it."""

import math

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.testing import check_grads
from tensorlib.testing.op_db_nnmore import (
    _cosine_embedding_ref,
    _multi_margin_ref,
    _multilabel_ref,
    _multilabel_soft_ref,
    _triplet_ref,
)

RNG = np.random.default_rng(20261203)
X = np.array([-25.0, -2.0, -0.7, -0.3, 0.0, 0.3, 0.45, 0.7, 2.0, 25.0])


def _torch():
    return pytest.importorskip("torch")


def _grad_sum(f, *args, argnums=0):
    return tl.grad(lambda *a: tl.sum(f(*a)), argnums=argnums)(*[tl.tensor(a) for a in args])


# ------------------------------------------------------------------ activations
ACTIVATIONS = {
    "hardshrink": (lambda x: tl.nn.hardshrink(x, 0.45), lambda x: np.where(np.abs(x) > 0.45, x, 0.0)),
    "softshrink": (lambda x: tl.nn.softshrink(x, 0.45), lambda x: np.sign(x) * np.maximum(np.abs(x) - 0.45, 0.0)),
    "tanhshrink": (tl.nn.tanhshrink, lambda x: x - np.tanh(x)),
    "threshold": (lambda x: tl.nn.threshold(x, 0.3, -7.0), lambda x: np.where(x > 0.3, x, -7.0)),
    "softplus": (
        lambda x: tl.nn.softplus(x, beta=2.0, threshold=5.0),
        lambda x: np.where(2 * x > 5, x, np.logaddexp(0.0, 2 * x) / 2),
    ),
    "rrelu_eval": (lambda x: tl.nn.rrelu(x, 0.1, 0.3), lambda x: np.where(x > 0, x, 0.2 * x)),
}
# the derivatives PyTorch takes at each kink (0 at the shrinks' and threshold's, the slope at rrelu's 0)
DERIVATIVES = {
    "hardshrink": lambda x: (np.abs(x) > 0.45).astype(float),
    "softshrink": lambda x: (np.abs(x) > 0.45).astype(float),
    "tanhshrink": lambda x: np.tanh(x) ** 2,
    "threshold": lambda x: (x > 0.3).astype(float),
    "softplus": lambda x: np.where(2 * x > 5, 1.0, 1 / (1 + np.exp(-2 * x))),
    "rrelu_eval": lambda x: np.where(x > 0, 1.0, 0.2),
}


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation_values_and_derivatives_match_numpy_at_and_off_the_kinks(name):
    f, ref = ACTIVATIONS[name]
    np.testing.assert_allclose(f(tl.tensor(X)).numpy(), ref(X), rtol=1e-13, atol=0)
    np.testing.assert_allclose(_grad_sum(f, X).numpy(), DERIVATIVES[name](X), rtol=1e-13, atol=0)
    away = np.array([-1.3, -0.2, 0.6, 1.7])  # off the kinks: second order by central differences too
    check_grads(f, (away,), order=2)


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activations_match_torch(name):
    torch = _torch()
    F = torch.nn.functional
    torch_f = {
        "hardshrink": lambda x: F.hardshrink(x, 0.45),
        "softshrink": lambda x: F.softshrink(x, 0.45),
        "tanhshrink": F.tanhshrink,
        "threshold": lambda x: F.threshold(x, 0.3, -7.0),
        "softplus": lambda x: F.softplus(x, 2.0, 5.0),
        "rrelu_eval": lambda x: F.rrelu(x, 0.1, 0.3),
    }[name]
    t = torch.tensor(X, requires_grad=True)
    out = torch_f(t)
    out.sum().backward()
    f = ACTIVATIONS[name][0]
    np.testing.assert_allclose(f(tl.tensor(X)).numpy(), out.detach().numpy(), rtol=1e-13, atol=0)
    np.testing.assert_allclose(_grad_sum(f, X).numpy(), t.grad.numpy(), rtol=1e-13, atol=0)


def test_softmin_is_softmax_of_the_negation_along_axis_and_stable():
    x = RNG.standard_normal((3, 4)) * 300
    for axis in (0, 1, -1):
        e = np.exp(-(x - x.min(axis, keepdims=True)))
        np.testing.assert_allclose(tl.nn.softmin(x, axis).numpy(), e / e.sum(axis, keepdims=True), rtol=1e-12)
    check_grads(lambda v: tl.nn.softmin(v, 0), (RNG.standard_normal((3, 2)),), order=2)
    assert tl.nn.Softmin(axis=0)(x).shape == (3, 4)


def test_softplus_defaults_stay_exact_and_the_layer_takes_torchs_defaults():
    x = np.array([-1000.0, 0.0, 21.0, 1000.0])
    np.testing.assert_array_equal(tl.nn.softplus(x).numpy(), np.logaddexp(0.0, x))  # no threshold: exact
    np.testing.assert_array_equal(tl.nn.Softplus()(x).numpy(), np.where(x > 20, x, np.logaddexp(0.0, x)))
    with pytest.raises(ValueError, match=r"^Softplus: beta must not be 0"):
        tl.nn.softplus(x, beta=0.0)
    with pytest.raises(ValueError, match=r"^Softplus: threshold must be a finite number, got nan"):
        tl.nn.softplus(x, threshold=float("nan"))


def test_rrelu_training_draws_one_slope_per_element_within_bounds_and_its_gradient_is_that_slope():
    x = -np.ones(20000)
    y = tl.nn.rrelu(x, 0.1, 0.3, training=True, seed=3).numpy()
    slopes = -y
    assert 0.1 <= slopes.min() and slopes.max() <= 0.3 and len(np.unique(slopes)) > 19000
    # uniform on [0.1, 0.3]: mean 0.2, variance 0.2**2 / 12 (five standard errors)
    assert abs(slopes.mean() - 0.2) < 5 * math.sqrt(0.04 / 12 / x.size)
    assert abs(slopes.var() - 0.04 / 12) < 5e-5
    np.testing.assert_array_equal(tl.nn.rrelu(x, 0.1, 0.3, training=True, seed=3).numpy(), y)  # seeded: same
    z = RNG.standard_normal(50)
    out = tl.nn.rrelu(z, 0.1, 0.3, training=True, seed=5).numpy()
    grad = _grad_sum(lambda v: tl.nn.rrelu(v, 0.1, 0.3, training=True, seed=5), z).numpy()
    np.testing.assert_allclose(grad, np.where(z > 0, 1.0, out / z), rtol=1e-12)
    np.testing.assert_array_equal(out[z > 0], z[z > 0])


def test_rrelu_training_traces_with_an_unknown_batch_and_maps_with_randomness():
    f = tl.function(lambda v: tl.nn.rrelu(v, 0.1, 0.3, training=True))
    y = f.get_graph(tl.TensorSpec((None, 3), tl.float64))(-np.ones((4, 3))).numpy()
    assert y.shape == (4, 3) and ((-0.3 <= y) & (y <= -0.1)).all()
    mapped = tl.vmap(lambda v: tl.nn.rrelu(v, 0.1, 0.3, training=True), randomness="different")(-np.ones((3, 5)))
    assert mapped.shape == (3, 5) and len(np.unique(mapped.numpy())) == 15
    layer = tl.nn.RReLU(0.1, 0.3)
    assert len(np.unique(layer(-np.ones(10)).numpy())) == 10
    np.testing.assert_array_equal(layer.eval()(-np.ones(3)).numpy(), -0.2 * np.ones(3))


def test_activation_layers_match_their_functions():
    x = tl.tensor(X)
    np.testing.assert_array_equal(tl.nn.Hardshrink(0.45)(x).numpy(), tl.nn.hardshrink(x, 0.45).numpy())
    np.testing.assert_array_equal(tl.nn.Softshrink(0.45)(x).numpy(), tl.nn.softshrink(x, 0.45).numpy())
    np.testing.assert_array_equal(tl.nn.Tanhshrink()(x).numpy(), tl.nn.tanhshrink(x).numpy())
    np.testing.assert_array_equal(tl.nn.Threshold(0.3, -7.0)(x).numpy(), tl.nn.threshold(x, 0.3, -7.0).numpy())
    with pytest.raises(ValueError, match=r"^Softshrink: lambd must be a finite number >= 0, got -1"):
        tl.nn.Softshrink(-1)


def test_activation_errors_name_the_function():
    with pytest.raises(ValueError, match=r"^softshrink: lambd must be >= 0, got -0.5 \(input shape \(2,\), float64\)"):
        tl.nn.softshrink(np.ones(2), -0.5)
    with pytest.raises(ValueError, match=r"^rrelu: need 0 <= lower <= upper, got lower=0.5, upper=0.1"):
        tl.nn.rrelu(np.ones(2), 0.5, 0.1)
    with pytest.raises(TypeError, match=r"^hardshrink: input must be a real tensor, got complex128"):
        tl.nn.hardshrink(np.ones(2, complex))
    assert tl.nn.tanhshrink(np.array([1, 2])).dtype == tl.float64  # integers: NumPy's rule


# ------------------------------------------------------------------ margin and embedding losses
def _triplets(n=5, d=4):
    a = RNG.standard_normal((n, d))
    return a, a + RNG.uniform(0.3, 1.0, (n, d)), a - RNG.uniform(0.3, 1.5, (n, d))


@pytest.mark.parametrize("p, swap", [(2.0, False), (1.0, True), (3.0, True), (math.inf, False)])
def test_triplet_margin_loss_matches_numpy_and_central_differences(p, swap):
    a, pos, neg = _triplets()
    got = tl.nn.triplet_margin_loss(a, pos, neg, margin=1.5, p=p, swap=swap, reduction="none").numpy()
    np.testing.assert_allclose(got, _triplet_ref(a, pos, neg, 1.5, p, 1e-6, swap, "none"), rtol=1e-13)
    mean = tl.nn.triplet_margin_loss(a, pos, neg, margin=1.5, p=p, swap=swap)
    np.testing.assert_allclose(float(mean), got.mean(), rtol=1e-13)
    if not math.isinf(p):
        check_grads(lambda *t: tl.nn.triplet_margin_loss(*t, margin=1.5, p=p, swap=swap), (a, pos, neg), order=2)


def test_pairwise_distance_adds_eps_to_the_difference_as_torch():
    x = RNG.standard_normal((3, 4))
    np.testing.assert_allclose(tl.nn.pairwise_distance(x, x).numpy(), np.full(3, 1e-6 * 2), rtol=1e-12)
    got = tl.nn.pairwise_distance(x, x[::-1], p=1.5, eps=0.1, keepdim=True).numpy()
    np.testing.assert_allclose(got, (np.abs(x - x[::-1] + 0.1) ** 1.5).sum(-1, keepdims=True) ** (1 / 1.5))
    assert np.isfinite(_grad_sum(tl.nn.pairwise_distance, x, x).numpy()).all()  # equal inputs: finite


def test_cosine_embedding_multi_margin_multilabel_losses_match_numpy():
    x1, x2 = RNG.standard_normal((4, 3)), RNG.standard_normal((4, 3))
    t = np.array([1, -1, 1, -1])
    np.testing.assert_allclose(
        tl.nn.cosine_embedding_loss(x1, x2, t, margin=-0.2, reduction="none").numpy(),
        _cosine_embedding_ref(x1, x2, t, -0.2, "none"),
        rtol=1e-13,
    )
    check_grads(lambda u, v: tl.nn.cosine_embedding_loss(u, v, t, margin=-0.9), (x1, x2), order=2)
    scores, classes = RNG.standard_normal((5, 4)), np.array([0, 3, 1, 1, 2])
    weight = RNG.uniform(0.5, 2.0, 4)
    for p in (1, 2):
        got = tl.nn.multi_margin_loss(scores, classes, p=p, margin=0.7, weight=weight, reduction="none").numpy()
        np.testing.assert_allclose(got, _multi_margin_ref(scores, classes, p, 0.7, weight, "none"), rtol=1e-13)
        check_grads(lambda s: tl.nn.multi_margin_loss(s, classes, p=p, margin=0.7, weight=weight), (scores,))
    listed = np.array([[3, 0, -1, 1], [1, 1, 2, -1], [-1, 0, 0, 0], [0, 1, 2, 3], [2, -1, 3, 3]])
    got = tl.nn.multilabel_margin_loss(scores, listed, reduction="none").numpy()
    np.testing.assert_allclose(got, _multilabel_ref(scores, listed, "none"), rtol=1e-13)
    check_grads(lambda s: tl.nn.multilabel_margin_loss(s, listed), (scores,))
    labels = (RNG.random((5, 4)) > 0.5).astype(float)
    got = tl.nn.multilabel_soft_margin_loss(scores * 40, labels, weight=weight, reduction="sum")
    np.testing.assert_allclose(float(got), _multilabel_soft_ref(scores * 40, labels, weight, "none").sum(), rtol=1e-13)
    check_grads(lambda s: tl.nn.multilabel_soft_margin_loss(s, labels, weight), (scores,), order=2)


def test_margin_losses_match_torch_values_and_gradients():
    torch = _torch()
    F = torch.nn.functional
    a, pos, neg = _triplets()

    def both(tl_f, torch_f, arrays, differentiable):
        ts = [torch.tensor(v, requires_grad=k in differentiable) for k, v in enumerate(arrays)]
        out = torch_f(*ts)
        out.sum().backward()
        np.testing.assert_allclose(tl_f(*arrays).numpy(), out.detach().numpy(), rtol=1e-12, atol=1e-15)
        grads = tl.grad(lambda *v: tl.sum(tl_f(*v)), argnums=differentiable)(*[tl.tensor(v) for v in arrays])
        for k, g in zip(differentiable, grads):
            np.testing.assert_allclose(g.numpy(), ts[k].grad.numpy(), rtol=1e-11, atol=1e-15)

    for kw in ({}, {"p": 1.0, "swap": True}, {"p": 3.0, "eps": 0.1, "margin": 2.0, "reduction": "sum"}):
        both(
            lambda *v: tl.nn.triplet_margin_loss(*v, **kw),
            lambda *v: F.triplet_margin_loss(*v, **kw),
            (a, pos, neg),
            (0, 1, 2),
        )
    l1 = (lambda u, v: tl.sum(tl.abs(u - v), axis=-1), lambda u, v: (u - v).abs().sum(-1))
    both(
        lambda *v: tl.nn.triplet_margin_with_distance_loss(*v, distance_function=l1[0], swap=True),
        lambda *v: F.triplet_margin_with_distance_loss(*v, distance_function=l1[1], swap=True),
        (a, pos, neg),
        (0, 1, 2),
    )
    t = np.array([1, -1, 1, -1, 1])
    both(
        lambda u, v, y: tl.nn.cosine_embedding_loss(u, v, y, 0.1),
        lambda u, v, y: F.cosine_embedding_loss(u, v, y, 0.1),
        (a, neg, t),
        (0, 1),
    )
    scores, classes = RNG.standard_normal((5, 4)), np.array([0, 3, 1, 1, 2])
    weight = RNG.uniform(0.5, 2.0, 4)
    for p in (1, 2):
        both(
            lambda s, c, w: tl.nn.multi_margin_loss(s, c, p, 0.5, w),
            lambda s, c, w: F.multi_margin_loss(s, c, p, 0.5, w),
            (scores, classes, weight),
            (0,),
        )
    listed = np.array([[3, 0, -1, 1], [1, 1, 2, -1], [-1, 0, 0, 0], [0, 1, 2, 3], [2, -1, 3, 3]])
    both(tl.nn.multilabel_margin_loss, F.multilabel_margin_loss, (scores, listed), (0,))
    labels = (RNG.random((5, 4)) > 0.5).astype(float)
    both(
        lambda s, y, w: tl.nn.multilabel_soft_margin_loss(s, y, w, "none"),
        lambda s, y, w: F.multilabel_soft_margin_loss(s, y, w, reduction="none"),
        (scores * 30, labels, weight),
        (0,),
    )


def test_unbatched_losses_and_traced_and_mapped_losses_agree_with_eager():
    a, pos, neg = _triplets()
    scores, classes = RNG.standard_normal((5, 4)), np.array([0, 3, 1, 1, 2])
    listed = np.array([[3, 0, -1, 1], [1, 1, 2, -1], [-1, 0, 0, 0], [0, 1, 2, 3], [2, -1, 3, 3]])
    batched = tl.nn.multilabel_margin_loss(scores, listed, reduction="none").numpy()
    for k in range(5):  # a (C,) input is one sample
        assert float(tl.nn.multilabel_margin_loss(scores[k], listed[k])) == pytest.approx(batched[k], rel=1e-14)
    spec = tl.TensorSpec((None, 4), tl.float64)
    traced = tl.function(lambda s, y: tl.nn.multilabel_margin_loss(s, y, reduction="none"))
    got = traced.get_graph(spec, tl.TensorSpec((None, 4), tl.int64))(scores, listed).numpy()
    np.testing.assert_allclose(got, batched, rtol=1e-14)
    mapped = tl.vmap(lambda s, y: tl.nn.multi_margin_loss(s, y))(scores, classes).numpy()
    np.testing.assert_allclose(mapped, tl.nn.multi_margin_loss(scores, classes, reduction="none").numpy(), rtol=1e-14)
    f = tl.function(lambda *v: tl.nn.triplet_margin_loss(*v, swap=True))
    np.testing.assert_allclose(
        float(f.get_graph(spec, spec, spec)(a[:, :4], pos[:, :4], neg[:, :4])),
        float(tl.nn.triplet_margin_loss(a, pos, neg, swap=True)),
        rtol=1e-14,
    )


def test_loss_errors_name_the_function_the_argument_and_the_shapes():
    with pytest.raises(ValueError, match=r"^multi_margin_loss: target holds class indices outside \[0, 3\): \[3\]"):
        tl.nn.multi_margin_loss(np.ones((2, 3)), np.array([0, 3]))
    with pytest.raises(ValueError, match=r"^multilabel_margin_loss: target holds class indices outside \[0, 3\)"):
        tl.nn.multilabel_margin_loss(np.ones((1, 3)), np.array([[0, 5, -1]]))
    tl.nn.multilabel_margin_loss(np.ones((1, 3)), np.array([[0, -1, 7]]))  # after the first -1 nothing is read
    with pytest.raises(TypeError, match=r"^multi_margin_loss: target must hold class indices \(integers\)"):
        tl.nn.multi_margin_loss(np.ones((2, 3)), np.array([0.0, 1.0]))
    with pytest.raises(ValueError, match=r"^triplet_margin_loss: anchor shape \(2, 3\) \(float64\) and positive shape"):
        tl.nn.triplet_margin_loss(np.ones((2, 3)), np.ones((2, 4)), np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"^pairwise_distance: p must be a number > 0"):
        tl.nn.pairwise_distance(np.ones(2), np.ones(2), p=0)


def test_pair_errors_name_the_arguments_the_caller_passed():
    # Before: "margin_ranking_loss: input shape (2,) ... and target shape (3,) ..." for input1 and input2, and
    # cosine_similarity's x1 and x2 were "input" and "target" too.
    with pytest.raises(
        ValueError, match=r"^margin_ranking_loss: input1 shape \(2,\) \(float64\) and input2 shape \(3,\)"
    ):
        tl.nn.margin_ranking_loss(np.ones(2), np.ones(3), np.ones(2))
    with pytest.raises(ValueError, match=r"^cosine_similarity: x1 shape \(2, 2\) \(float64\) and x2 shape \(3, 2\)"):
        tl.nn.cosine_similarity(np.ones((2, 2)), np.ones((3, 2)))

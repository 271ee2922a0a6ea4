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
    _fractional_ref,
    _multi_margin_ref,
    _multilabel_ref,
    _multilabel_soft_ref,
    _triplet_ref,
    torch_pool_ref,
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


# ------------------------------------------------------------------ PyTorch's pool options, max_unpool, lp_pool
POOLS = {
    1: (tl.nn.avg_pool1d, tl.nn.max_pool1d),
    2: (tl.nn.avg_pool, tl.nn.max_pool),
    3: (tl.nn.avg_pool3d, tl.nn.max_pool3d),
}
FORMATS = {1: "NCW", 2: "NCHW", 3: "NCDHW"}
# (rank, spatial size, ksize, stride, padding, dilation): ceil mode keeps, drops, or adds a partial window
POOL_CASES = [
    (1, 7, 3, 2, 1, 1),
    (2, 5, 2, 2, 1, 1),
    (2, 6, 3, 2, 1, 2),
    (2, 7, 3, 3, 0, 1),
    (3, 5, 2, 2, 1, 1),
    (3, 6, 2, 3, 0, 2),
]


def _weights(shape):
    return np.arange(int(np.prod(shape))).reshape(shape) % 3 + 1.0  # an uneven cotangent: each cell its own


@pytest.mark.parametrize("rank, n, k, s, p, d", POOL_CASES)
@pytest.mark.parametrize("ceil", [False, True])
def test_torch_pool_options_match_pytorchs_definition_values_indices_and_gradients(rank, n, k, s, p, d, ceil):
    x = RNG.standard_normal((2, 3) + (n,) * rank)
    fmt = FORMATS[rank]
    avg, mx = POOLS[rank]
    values, indices = mx(x, k, s, p, fmt, dilations=d, ceil_mode=ceil, return_indices=True)
    ref_values, ref_indices = torch_pool_ref(x, "max", k, s, p, d, ceil)
    np.testing.assert_array_equal(values.numpy(), ref_values)
    np.testing.assert_array_equal(indices.numpy(), ref_indices)
    assert indices.dtype == tl.int64
    # the gradient goes to the cell each index names
    grad = _grad_sum(lambda v: mx(v, k, s, p, fmt, dilations=d, ceil_mode=ceil) * _weights(ref_values.shape), x)
    expected = np.zeros((6, n**rank))
    np.add.at(expected, (np.arange(6)[:, None], ref_indices.reshape(6, -1)), _weights(ref_values.shape).reshape(6, -1))
    np.testing.assert_allclose(grad.numpy(), expected.reshape(x.shape), rtol=1e-15)
    channels_last = mx(np.moveaxis(x, 1, -1), k, s, p, dilations=d, ceil_mode=ceil)  # Keras' layout too
    np.testing.assert_array_equal(np.moveaxis(channels_last.numpy(), -1, 1), ref_values)
    if d == 1:
        for include in (True, False):
            for divisor in (None, 5):
                got = avg(x, k, s, p, fmt, count_include_pad=include, ceil_mode=ceil, divisor_override=divisor)
                ref = torch_pool_ref(x, "avg", k, s, p, 1, ceil, include, divisor)[0]
                np.testing.assert_allclose(got.numpy(), ref, rtol=1e-13)
            check_grads(lambda v: avg(v, k, s, p, fmt, count_include_pad=include, ceil_mode=ceil), (x,), order=2)


@pytest.mark.parametrize("rank, n, k, s, p, d", POOL_CASES)
def test_torch_pool_options_match_torch(rank, n, k, s, p, d):
    torch = _torch()
    F = torch.nn.functional
    x = RNG.standard_normal((2, 3) + (n,) * rank)
    fmt = FORMATS[rank]
    avg, mx = POOLS[rank]
    t_avg, t_max = {1: (F.avg_pool1d, F.max_pool1d), 2: (F.avg_pool2d, F.max_pool2d), 3: (F.avg_pool3d, F.max_pool3d)}[
        rank
    ]
    for ceil in (False, True):
        t = torch.tensor(x, requires_grad=True)
        out, idx = t_max(t, k, s, p, d, ceil, return_indices=True)
        (out * torch.tensor(_weights(out.shape))).sum().backward()
        values, indices = mx(x, k, s, p, fmt, dilations=d, ceil_mode=ceil, return_indices=True)
        np.testing.assert_array_equal(values.numpy(), out.detach().numpy())
        np.testing.assert_array_equal(indices.numpy(), idx.numpy())
        grad = _grad_sum(lambda v: mx(v, k, s, p, fmt, dilations=d, ceil_mode=ceil) * _weights(out.shape), x)
        np.testing.assert_array_equal(grad.numpy(), t.grad.numpy())
        if d > 1:
            continue
        for include in (True, False):
            t = torch.tensor(x, requires_grad=True)
            extra = {"divisor_override": 3} if rank > 1 and include else {}
            out = t_avg(t, k, s, p, ceil, include, **extra)
            (out * torch.tensor(_weights(out.shape))).sum().backward()
            f = lambda v: avg(v, k, s, p, fmt, count_include_pad=include, ceil_mode=ceil, **extra)
            np.testing.assert_allclose(f(x).numpy(), out.detach().numpy(), rtol=1e-13)
            grad = _grad_sum(lambda v: f(v) * _weights(out.shape), x)
            np.testing.assert_allclose(grad.numpy(), t.grad.numpy(), rtol=1e-13)


def test_max_pool_indices_name_the_first_maximum_or_the_last_nan_as_torch():
    x = np.array([[[1.0, 3.0, 3.0, 0.0, np.nan, 0.0, np.nan, 2.0]]])
    values, indices = tl.nn.max_pool1d(x, 4, 4, "VALID", "NCW", dilations=1, return_indices=True)
    np.testing.assert_array_equal(values.numpy(), [[[3.0, np.nan]]])
    assert indices.numpy().tolist() == [[[1, 6]]]
    grad = _grad_sum(
        lambda v: tl.nn.max_pool1d(v, 3, 1, 0, "NCW", return_indices=True)[0], np.array([[[2.0, 2.0, 1.0]]])
    )
    assert grad.numpy().tolist() == [[[1.0, 0.0, 0.0]]]  # ties: the first maximum takes it all (PyTorch)


def test_max_unpool_inverts_max_pool_with_indices_and_its_gradient_gathers():
    x = RNG.standard_normal((2, 3, 4, 6))
    values, indices = tl.nn.max_pool(x, 2, 2, "VALID", "NCHW", return_indices=True)
    unpooled = tl.nn.max_unpool(values, indices, 2, data_format="NCHW").numpy()
    kept = unpooled != 0
    np.testing.assert_array_equal(unpooled[kept], x[kept])
    assert kept.reshape(2, 3, 2, 2, 3, 2).sum((3, 5)).tolist() == np.ones((2, 3, 2, 3)).tolist()  # one per window
    w = RNG.standard_normal(x.shape)
    grad = _grad_sum(lambda v: tl.nn.max_unpool(v, indices, 2, data_format="NCHW") * w, values.numpy())
    np.testing.assert_array_equal(
        grad.numpy(),
        np.take_along_axis(w.reshape(2, 3, -1), indices.numpy().reshape(2, 3, -1), 2).reshape(values.shape),
    )
    bigger = tl.nn.max_unpool(values, indices, 2, data_format="NCHW", output_size=(5, 7))
    assert bigger.shape == (2, 3, 5, 7)
    with pytest.raises(
        ValueError, match=r"^max_unpool: output_size must give the 2 spatial sizes, each from the default \(4, 6\)"
    ):
        tl.nn.max_unpool(values, indices, 2, data_format="NCHW", output_size=(6, 6))
    with pytest.raises(ValueError, match=r"^max_unpool: indices must lie in \[0, 24\)"):
        tl.nn.max_unpool(values, indices.numpy() + 30, 2, data_format="NCHW")


def test_max_unpool_matches_torch():
    torch = _torch()
    F = torch.nn.functional
    x = RNG.standard_normal((2, 3, 6, 6))
    out, idx = F.max_pool2d(torch.tensor(x), 3, 3, return_indices=True)
    t = out.clone().requires_grad_(True)
    u = F.max_unpool2d(t, idx, 3, 3, output_size=(7, 8))
    (u * torch.tensor(_weights(u.shape))).sum().backward()
    got = tl.nn.max_unpool(out.numpy(), idx.numpy(), 3, 3, data_format="NCHW", output_size=(7, 8))
    np.testing.assert_array_equal(got.numpy(), u.detach().numpy())
    grad = _grad_sum(
        lambda v: tl.nn.max_unpool(v, idx.numpy(), 3, 3, 0, "NCHW", (7, 8)) * _weights(u.shape), out.numpy()
    )
    np.testing.assert_array_equal(grad.numpy(), t.grad.numpy())


def test_lp_pool_is_the_windows_p_norm_and_matches_torch():
    x = np.abs(RNG.standard_normal((2, 5, 5, 3))) + 0.1
    for p in (1.0, 2.0, 3.5):
        got = tl.nn.lp_pool(x, p, 2).numpy()
        windows = x[:, :4, :4].reshape(2, 2, 2, 2, 2, 3)
        np.testing.assert_allclose(got, (windows**p).sum((2, 4)) ** (1 / p), rtol=1e-13)
        check_grads(lambda v: tl.nn.lp_pool(v, p, 2, 1, True), (x,), order=2)
    torch = pytest.importorskip("torch")
    t = torch.tensor(np.moveaxis(x, -1, 1), requires_grad=True)
    out = torch.nn.functional.lp_pool2d(t, 2.5, 3, 2, ceil_mode=True)
    out.sum().backward()
    f = lambda v: tl.nn.lp_pool(v, 2.5, 3, 2, True, "NCHW")
    np.testing.assert_allclose(f(t.detach().numpy()).numpy(), out.detach().numpy(), rtol=1e-13)
    np.testing.assert_allclose(_grad_sum(f, t.detach().numpy()).numpy(), t.grad.numpy(), rtol=1e-12)


def test_pool_options_trace_with_an_unknown_batch_and_map():
    x = RNG.standard_normal((3, 5, 5, 2))
    spec = tl.TensorSpec((None, 5, 5, 2), tl.float64)
    f = tl.function(lambda v: tl.nn.max_pool(v, 3, 2, 1, dilations=2, ceil_mode=True, return_indices=True))
    for traced, eager in zip(
        f.get_graph(spec)(x), tl.nn.max_pool(x, 3, 2, 1, dilations=2, ceil_mode=True, return_indices=True)
    ):
        np.testing.assert_array_equal(traced.numpy(), eager.numpy())
    g = tl.function(lambda v: tl.nn.avg_pool(v, 3, 2, 1, count_include_pad=False, ceil_mode=True))
    np.testing.assert_allclose(
        g.get_graph(spec)(x).numpy(),
        tl.nn.avg_pool(x, 3, 2, 1, count_include_pad=False, ceil_mode=True).numpy(),
        rtol=1e-14,
    )
    mapped = tl.vmap(lambda v: tl.nn.max_pool(v, 3, 2, 1, dilations=2, return_indices=True)[1])(x[:, None])
    np.testing.assert_array_equal(
        mapped.numpy()[:, 0], tl.nn.max_pool(x, 3, 2, 1, dilations=2, return_indices=True)[1].numpy()
    )


def test_pool_layers_take_torchs_options():
    x = RNG.standard_normal((1, 2, 7, 7))
    layer = tl.nn.MaxPool2D(3, 2, 1, data_format="NCHW", ceil_mode=True, return_indices=True)
    _, indices = layer(x)
    np.testing.assert_array_equal(indices.numpy(), torch_pool_ref(x, "max", 3, 2, 1, 1, True)[1])
    avg = tl.nn.AvgPool1D(3, 2, 1, data_format="NCW", count_include_pad=False, ceil_mode=True)
    np.testing.assert_allclose(avg(x[:, :, 0]).numpy(), torch_pool_ref(x[:, :, 0], "avg", 3, 2, 1, 1, True, False)[0])
    assert "ceil_mode=True" in repr(layer)


def test_pool_option_errors_name_the_function_and_the_input():
    x = np.ones((1, 1, 4, 4))
    with pytest.raises(
        ValueError, match=r"^AvgPool: explicit padding 1 needs count_include_pad=True \(PyTorch's default"
    ):
        tl.nn.avg_pool(x, 2, 2, 1, "NCHW", ceil_mode=True)
    with pytest.raises(ValueError, match=r"^MaxPool: ceil_mode needs 'VALID' or explicit padding, got 'SAME'"):
        tl.nn.max_pool(x, 2, 2, "SAME", "NCHW", ceil_mode=True)
    with pytest.raises(ValueError, match=r"^max_pool3d: each padding must be smaller than the window 2, got \(2, 2\)"):
        tl.nn.max_pool3d(np.ones((1, 1, 4, 4, 4)), 2, 2, 2, "NCDHW", ceil_mode=True)
    with pytest.raises(ValueError, match=r"^AvgPool: divisor_override must be a nonzero int, got 0"):
        tl.nn.avg_pool(x, 2, 2, "VALID", "NCHW", divisor_override=0)
    with pytest.raises(ValueError, match=r"^MaxPool: a window covers no input cell \(only padding\)"):
        tl.nn.max_pool(np.ones((1, 1, 1, 1)), 2, 1, 1, "NCHW", dilations=2)
    with pytest.raises(TypeError, match=r"^MaxPool: input must be a floating-point tensor"):
        tl.nn.max_pool(np.ones((1, 4, 4, 1), np.int64), 2, 2, 0)


# ------------------------------------------------------------------ pixel_shuffle, pixel_unshuffle, local_response_norm
def test_pixel_shuffle_functions_follow_torchs_channel_order_and_invert_each_other():
    x = RNG.standard_normal((2, 12, 3, 4))  # NCHW, r = 2: 3 channels of 2 x 2 blocks
    y = tl.nn.pixel_shuffle(x, 2, "NCHW").numpy()
    for c in range(3):
        for i in range(2):
            for j in range(2):
                np.testing.assert_array_equal(y[:, c, i::2, j::2], x[:, c * 4 + i * 2 + j])
    np.testing.assert_array_equal(tl.nn.pixel_unshuffle(y, 2, "NCHW").numpy(), x)
    last = tl.nn.pixel_shuffle(np.moveaxis(x, 1, -1), 2).numpy()  # NHWC: the same order
    np.testing.assert_array_equal(np.moveaxis(last, -1, 1), y)
    np.testing.assert_array_equal(tl.nn.PixelShuffle(2, data_format="NCHW")(x).numpy(), y)
    with pytest.raises(ValueError, match=r"^pixel_shuffle: the channels must be known and a multiple of upscale"):
        tl.nn.pixel_shuffle(np.ones((1, 3, 2, 2)), 2, "NCHW")
    with pytest.raises(ValueError, match=r"^pixel_unshuffle: downscale_factor must be a positive integer, got 0"):
        tl.nn.pixel_unshuffle(np.ones((1, 4, 2, 2)), 0)
    torch = pytest.importorskip("torch")
    np.testing.assert_array_equal(y, torch.nn.functional.pixel_shuffle(torch.tensor(x), 2).numpy())
    np.testing.assert_array_equal(
        tl.nn.pixel_unshuffle(y, 2, "NCHW").numpy(), torch.nn.functional.pixel_unshuffle(torch.tensor(y), 2).numpy()
    )


def _lrn_ref(x, size, alpha, beta, k):
    channels = x.shape[1]
    out = np.empty_like(x)
    for c in range(channels):
        near = range(max(0, c - size // 2), min(channels, c + (size - 1) // 2 + 1))
        out[:, c] = x[:, c] / (k + alpha / size * sum(x[:, j] ** 2 for j in near)) ** beta
    return out


@pytest.mark.parametrize("size", [1, 2, 3, 5])
def test_local_response_norm_matches_its_definition_and_torch(size):
    x = RNG.standard_normal((2, 4, 3, 2)) * 3
    got = tl.nn.local_response_norm(x, size, alpha=0.3, beta=0.6, k=1.5).numpy()
    np.testing.assert_allclose(got, _lrn_ref(x, size, 0.3, 0.6, 1.5), rtol=1e-13)
    last = tl.nn.local_response_norm(np.moveaxis(x, 1, -1), size, 0.3, 0.6, 1.5, axis=-1).numpy()
    np.testing.assert_allclose(np.moveaxis(last, -1, 1), got, rtol=1e-14)
    check_grads(lambda v: tl.nn.local_response_norm(v, size, 0.3, 0.6, 1.5), (x[:1, :, :2, :1],), order=2)
    np.testing.assert_allclose(tl.nn.LocalResponseNorm(size, 0.3, 0.6, 1.5)(x).numpy(), got, rtol=1e-15)
    torch = pytest.importorskip("torch")
    t = torch.tensor(x, requires_grad=True)
    out = torch.nn.functional.local_response_norm(t, size, 0.3, 0.6, 1.5)
    (out * torch.tensor(_weights(out.shape))).sum().backward()
    np.testing.assert_allclose(got, out.detach().numpy(), rtol=1e-12)
    grad = _grad_sum(lambda v: tl.nn.local_response_norm(v, size, 0.3, 0.6, 1.5) * _weights(x.shape), x)
    np.testing.assert_allclose(grad.numpy(), t.grad.numpy(), rtol=1e-11)


def test_local_response_norm_traces_with_an_unknown_batch_and_refuses_bad_sizes():
    x = RNG.standard_normal((3, 5, 4))
    f = tl.function(lambda v: tl.nn.local_response_norm(v, 3))
    np.testing.assert_allclose(
        f.get_graph(tl.TensorSpec((None, 5, 4), tl.float64))(x).numpy(), _lrn_ref(x, 3, 1e-4, 0.75, 1.0), rtol=1e-13
    )
    with pytest.raises(ValueError, match=r"^local_response_norm: size must be a positive int, got 0"):
        tl.nn.local_response_norm(x, 0)
    with pytest.raises(ValueError, match=r"^local_response_norm: input needs a batch and a channel axis"):
        tl.nn.local_response_norm(np.ones(3), 2)


# ------------------------------------------------------------------ unfold (im2col) and fold (col2im)
UNFOLD_CASES = [(2, 1, 0, 1), (3, 2, 1, 2), ((2, 3), (1, 2), (1, 0), (2, 1))]


def _pair_of(v):
    return (v, v) if isinstance(v, int) else v


def _unfold_loop(x, k, d, p, s):
    """PyTorch's im2col by its definition: row c * kh * kw + i * kw + j, column oh * ow row-major."""
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = map(_pair_of, (k, d, p, s))
    padded = np.pad(x, [(0, 0), (0, 0), (ph, ph), (pw, pw)])
    oh, ow = (padded.shape[2] - dh * (kh - 1) - 1) // sh + 1, (padded.shape[3] - dw * (kw - 1) - 1) // sw + 1
    out = np.zeros((x.shape[0], x.shape[1] * kh * kw, oh * ow))
    for c in range(x.shape[1]):
        for i in range(kh):
            for j in range(kw):
                for a in range(oh):
                    for b in range(ow):
                        out[:, c * kh * kw + i * kw + j, a * ow + b] = padded[:, c, a * sh + i * dh, b * sw + j * dw]
    return out


@pytest.mark.parametrize("k, d, p, s", UNFOLD_CASES)
def test_unfold_is_im2col_and_fold_is_its_transpose(k, d, p, s):
    x = RNG.standard_normal((2, 3, 7, 6))
    columns = tl.nn.unfold(x, k, d, p, s).numpy()
    np.testing.assert_array_equal(columns, _unfold_loop(x, k, d, p, s))
    w = RNG.standard_normal(columns.shape)
    folded = tl.nn.fold(w, (7, 6), k, d, p, s).numpy()
    np.testing.assert_allclose((columns * w).sum(), (x * folded).sum(), rtol=1e-12)  # <unfold x, w> = <x, fold w>
    check_grads(lambda v: tl.nn.fold(v, (7, 6), k, d, p, s), (w,), order=1)
    assert tl.nn.Fold((7, 6), k, d, p, s)(w).shape == (2, 3, 7, 6) and tl.nn.Unfold(k, d, p, s)(x).shape == w.shape


@pytest.mark.parametrize("k, d, p, s", UNFOLD_CASES)
def test_unfold_and_fold_match_torch(k, d, p, s):
    torch = _torch()
    F = torch.nn.functional
    x = RNG.standard_normal((2, 3, 7, 6))
    t = torch.tensor(x, requires_grad=True)
    u = F.unfold(t, k, d, p, s)
    (u * torch.tensor(_weights(u.shape))).sum().backward()
    np.testing.assert_array_equal(tl.nn.unfold(x, k, d, p, s).numpy(), u.detach().numpy())
    grad = _grad_sum(lambda v: tl.nn.unfold(v, k, d, p, s) * _weights(u.shape), x)
    np.testing.assert_allclose(grad.numpy(), t.grad.numpy(), rtol=1e-14)
    c = torch.tensor(u.detach().numpy(), requires_grad=True)
    f = F.fold(c, (7, 6), k, d, p, s)
    (f * torch.tensor(_weights(f.shape))).sum().backward()
    np.testing.assert_allclose(
        tl.nn.fold(c.detach().numpy(), (7, 6), k, d, p, s).numpy(), f.detach().numpy(), rtol=1e-14
    )
    grad = _grad_sum(lambda v: tl.nn.fold(v, (7, 6), k, d, p, s) * _weights(f.shape), c.detach().numpy())
    np.testing.assert_allclose(grad.numpy(), c.grad.numpy(), rtol=1e-14)


def test_unfold_and_fold_trace_with_an_unknown_batch_and_name_bad_shapes():
    x = RNG.standard_normal((2, 3, 5, 4))
    f = tl.function(lambda v: tl.nn.fold(tl.nn.unfold(v, 2, 1, 1), (5, 4), 2, 1, 1))
    got = f.get_graph(tl.TensorSpec((None, 3, 5, 4), tl.float64))(x).numpy()
    np.testing.assert_allclose(got, tl.nn.fold(tl.nn.unfold(x, 2, 1, 1), (5, 4), 2, 1, 1).numpy(), rtol=1e-14)
    with pytest.raises(ValueError, match=r"^fold: input must be \(N, C \* 4, 12\) for kernel \(2, 2\) and output_size"):
        tl.nn.fold(np.ones((1, 4, 5)), (4, 5), 2)
    with pytest.raises(ValueError, match=r"^unfold: input must be 4-D \(N, C, H, W\)"):
        tl.nn.unfold(np.ones((4, 4)), 2)  # 3-D is PyTorch's unbatched (C, H, W)
    with pytest.raises(
        ValueError, match=r"^unfold: the kernel \(5, 5\) \(dilation \(1, 1\)\) is larger than the padded"
    ):
        tl.nn.unfold(np.ones((1, 1, 3, 3)), 5)


# ------------------------------------------------------------------ fractional_max_pool2d
def test_fractional_max_pool2d_follows_torchs_intervals_with_given_samples():
    x = RNG.standard_normal((2, 3, 9, 7))
    samples = RNG.random((2, 3, 2))
    values, indices = tl.nn.fractional_max_pool2d(x, (2, 3), (5, 4), None, True, samples, "NCHW")
    ref = _fractional_ref(x, (2, 3), (5, 4), None, False, samples, "NCHW")
    np.testing.assert_array_equal(values.numpy(), ref)
    np.testing.assert_array_equal(
        np.take_along_axis(x.reshape(2, 3, -1), indices.numpy().reshape(2, 3, -1), 2).reshape(ref.shape), ref
    )
    last = tl.nn.fractional_max_pool2d(np.moveaxis(x, 1, -1), (2, 3), output_ratio=(0.6, 0.6), random_samples=samples)
    assert last.shape == (2, 5, 4, 3)
    np.testing.assert_array_equal(np.moveaxis(last.numpy(), -1, 1), ref)
    w = _weights(ref.shape)
    grad = _grad_sum(
        lambda v: tl.nn.fractional_max_pool2d(v, (2, 3), (5, 4), random_samples=samples, data_format="NCHW") * w, x
    )
    expected = np.zeros((6, 63))
    np.add.at(expected, (np.arange(6)[:, None], indices.numpy().reshape(6, -1)), w.reshape(6, -1))
    np.testing.assert_array_equal(grad.numpy(), expected.reshape(x.shape))
    drawn = tl.nn.fractional_max_pool2d(x, 2, (4, 3), data_format="NCHW")  # samples drawn: still window maxima
    assert drawn.shape == (2, 3, 4, 3) and np.isin(drawn.numpy(), x).all()
    with pytest.raises(ValueError, match=r"^fractional_max_pool2d: give exactly one of output_size and output_ratio"):
        tl.nn.fractional_max_pool2d(x, 2, data_format="NCHW")
    torch = pytest.importorskip("torch")
    for dtype in (np.float64, np.float32):
        t = torch.tensor(x.astype(dtype))
        out, idx = torch.nn.functional.fractional_max_pool2d(
            t, (2, 3), (5, 4), return_indices=True, _random_samples=torch.tensor(samples.astype(dtype))
        )
        got = tl.nn.fractional_max_pool2d(x.astype(dtype), (2, 3), (5, 4), None, True, samples.astype(dtype), "NCHW")
        np.testing.assert_array_equal(got[0].numpy(), out.numpy())
        np.testing.assert_array_equal(got[1].numpy(), idx.numpy())

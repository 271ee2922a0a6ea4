"""tl.nn breadth: the activations, normalizations, losses and layers TensorFlow, JAX and PyTorch users reach
for, and the tails of the existing activations, against float64 formulas (and PyTorch where installed)."""

import math

import numpy as np
import pytest

import tensorlib as tl

from _helpers import MODES, run_in_mode


def _exact_gelu(x, approximate):
    """float64 GELU without cancellation: x * erfc(-x / sqrt 2) / 2, or x / (1 + exp(-2u))."""
    x = np.asarray(x, np.float64)
    if approximate:
        return x / (1.0 + np.exp(-2.0 * math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))
    return 0.5 * x * np.array([math.erfc(-v / math.sqrt(2.0)) for v in x.ravel()]).reshape(x.shape)


# ------------------------------------------------------------------ tails of the existing activations
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("approximate", [False, True])
def test_gelu_negative_tail_float32_has_no_cancellation(mode, approximate):
    # float32 GELU was -3.86e-6 at x = -4.8 (exact -3.81e-6) and 0 or 1e-7 garbage beyond -5.3; the tanh form
    # -1.6e-7 at -5.4 (exact -1.3e-8): (1 + erf) and (1 + tanh) cancel there.
    x = np.array([-4.8, -5.4, -6.0, -7.5, -9.0, -1.0, 0.0, 2.0, 30.0], np.float32)
    got = run_in_mode(mode, lambda v: tl.nn.gelu(v, approximate=approximate), x)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got.numpy(), _exact_gelu(x, approximate), rtol=2e-5, atol=0)


@pytest.mark.parametrize("approximate", [False, True])
def test_gelu_of_a_0d_tensor(approximate):
    for dtype in (np.float16, np.float32, np.float64):
        y = tl.nn.gelu(np.array(-5.4, dtype), approximate=approximate)
        assert y.shape == () and y.dtype == dtype
        np.testing.assert_allclose(float(y), _exact_gelu(np.float64(dtype(-5.4)), approximate), rtol=2e-5, atol=6e-8)


def test_gelu_float16_rounds_once():
    x = np.linspace(-6, 6, 97).astype(np.float16)
    for approximate in (False, True):
        got = tl.nn.gelu(x, approximate=approximate).numpy()
        assert got.dtype == np.float16
        np.testing.assert_array_equal(got, _exact_gelu(x, approximate).astype(np.float16))


def test_gelu_tanh_gradient_tail_and_saturation():
    x = np.array([-5.4, -6.0, -1.0, 0.5, 4.0, -40.0, 40.0, -1e4, 300.0], np.float32)
    g = tl.grad(lambda v: tl.sum(tl.nn.gelu(v, approximate=True)))(tl.tensor(x)).numpy()
    xd = x.astype(np.float64)
    u2 = 2.0 * math.sqrt(2.0 / math.pi) * (xd + 0.044715 * xd**3)
    s, sn = 1.0 / (1.0 + np.exp(-u2)), 1.0 / (1.0 + np.exp(u2))
    want = s + xd * s * sn * 2.0 * math.sqrt(2.0 / math.pi) * (1.0 + 3 * 0.044715 * xd * xd)
    np.testing.assert_allclose(g, want, rtol=3e-5, atol=1e-30)
    g16 = tl.grad(lambda v: tl.sum(tl.nn.gelu(v, approximate=True)))(tl.tensor(x.astype(np.float16))).numpy()
    assert np.isfinite(g16).all()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gelu_gradient_negative_tail(dtype):
    # Phi(x) + x phi(x): (1 + erf(x / sqrt 2)) / 2 cancels below x = -1 (float32 3% off at x = -5.55, 100% at -7).
    x = np.array([-1.5, -3.0, -5.55, -7.0, -9.0, -12.0, 0.5], dtype)
    g = tl.grad(lambda v: tl.sum(tl.nn.gelu(v)))(tl.tensor(x)).numpy()
    xd = x.astype(np.float64)
    want = 0.5 * np.array([math.erfc(-v / math.sqrt(2)) for v in xd]) + xd * np.exp(-xd * xd / 2) / math.sqrt(
        2 * math.pi
    )
    assert g.dtype == dtype
    np.testing.assert_allclose(g, want, rtol=2e-5 if dtype == np.float32 else 1e-12, atol=0)
    tl.testing.check_grads(tl.nn.gelu, [xd[:3]], order=2)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_elu_and_expm1_gradients_are_exp_in_the_tail(dtype):
    # The rules were output + 1 = expm1(x) + 1, which rounds to 0 below x = -17 in float32 (-37 in float64).
    x = np.array([-20.0, -30.0, -40.0, -80.0, -1.0], dtype)
    want = np.exp(x.astype(np.float64))
    for fn in (tl.nn.elu, tl.expm1):
        g = tl.grad(lambda v: tl.sum(fn(v)))(tl.tensor(x)).numpy()
        assert g.dtype == dtype
        np.testing.assert_allclose(g, want.astype(dtype), rtol=1e-6)
        h = tl.grad(lambda v: tl.sum(tl.grad(lambda w: tl.sum(fn(w)))(v)))(tl.tensor(x)).numpy()
        np.testing.assert_allclose(h, want.astype(dtype), rtol=1e-6)


# ------------------------------------------------------------------ the activations PyTorch and JAX users reach for
_SELU_ALPHA, _SELU_SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
_NEW_ACTIVATIONS = {  # name: (tensorlib, float64 formula, torch.nn.functional name and kwargs)
    "silu": (tl.nn.silu, lambda x: x / (1 + np.exp(-x)), ("silu", {})),
    "relu6": (tl.nn.relu6, lambda x: np.clip(x, 0, 6), ("relu6", {})),
    "selu": (
        tl.nn.selu,
        lambda x: _SELU_SCALE * np.where(x > 0, x, _SELU_ALPHA * np.expm1(np.minimum(x, 0))),
        ("selu", {}),
    ),
    "celu": (
        lambda x: tl.nn.celu(x, 2.0),
        lambda x: np.where(x > 0, x, 2 * np.expm1(np.minimum(x, 0) / 2)),
        ("celu", {"alpha": 2.0}),
    ),
    "hard_sigmoid": (tl.nn.hard_sigmoid, lambda x: np.clip(x + 3, 0, 6) / 6, ("hardsigmoid", {})),
    "hard_swish": (tl.nn.hard_swish, lambda x: x * np.clip(x + 3, 0, 6) / 6, ("hardswish", {})),
    "hard_tanh": (
        lambda x: tl.nn.hard_tanh(x, -2.0, 0.5),
        lambda x: np.clip(x, -2.0, 0.5),
        ("hardtanh", {"min_val": -2.0, "max_val": 0.5}),
    ),
    "log_sigmoid": (tl.nn.log_sigmoid, lambda x: -np.logaddexp(0, -x), ("logsigmoid", {})),
    "softsign": (tl.nn.softsign, lambda x: x / (1 + np.abs(x)), ("softsign", {})),
    "mish": (tl.nn.mish, lambda x: x * np.tanh(np.logaddexp(x, 0)), ("mish", {})),
}
# Kinks included: the gradients there must be PyTorch's one-sided ones.
_GRID = np.concatenate([np.linspace(-8, 8, 65), [-3.0, 3.0, 6.0, 0.5, -2.0, 0.0, -40.0, 40.0, -200.0, 200.0]])


@pytest.mark.parametrize("name", list(_NEW_ACTIVATIONS))
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_new_activation_values_keep_dtype_and_match_the_formula(name, dtype):
    fn, formula, _ = _NEW_ACTIVATIONS[name]
    x = _GRID.astype(dtype)
    y, g = fn(x), tl.grad(lambda v: tl.sum(fn(v)))(tl.tensor(x))
    assert y.dtype == g.dtype == dtype
    tol = {np.float16: 2e-3, np.float32: 2e-6, np.float64: 1e-14}[dtype]
    np.testing.assert_allclose(y.numpy(), formula(x.astype(np.float64)).astype(dtype), rtol=tol, atol=tol * 1e-3)
    np.testing.assert_array_equal(tl.function(fn)(x).numpy(), y.numpy())


@pytest.mark.parametrize("name", list(_NEW_ACTIVATIONS))
def test_new_activations_match_torch_to_second_order(name):
    torch = pytest.importorskip("torch")
    fn, _, (torch_name, kwargs) = _NEW_ACTIVATIONS[name]
    t = torch.tensor(_GRID, requires_grad=True)
    (tg,) = torch.autograd.grad(getattr(torch.nn.functional, torch_name)(t, **kwargs).sum(), t, create_graph=True)
    x = tl.tensor(_GRID)
    y = fn(x)
    np.testing.assert_allclose(
        y.numpy(), getattr(torch.nn.functional, torch_name)(t, **kwargs).detach().numpy(), rtol=1e-14, atol=1e-300
    )
    np.testing.assert_allclose(
        tl.grad(lambda v: tl.sum(fn(v)))(x).numpy(),
        tg.detach().numpy(),
        rtol=1e-7 if name == "hard_sigmoid" else 5e-14,  # PyTorch: 1/6 as a float32 constant in float64
        atol=1e-300,
    )
    if tg.requires_grad and name not in ("hard_sigmoid", "hard_swish", "relu6", "hard_tanh"):
        (th,) = torch.autograd.grad(tg.sum(), t)
        smooth = _GRID != 0.0  # selu and celu: PyTorch takes the right-hand second derivative at 0
        h = tl.grad(lambda v: tl.sum(tl.grad(lambda w: tl.sum(fn(w)))(v)))(x).numpy()
        np.testing.assert_allclose(h[smooth], th.numpy()[smooth], rtol=1e-9, atol=1e-15)


def test_log_sigmoid_is_finite_where_sigmoid_underflows():
    x = np.array([-200.0, -104.0, -90.0, 0.0, 200.0], np.float32)
    np.testing.assert_array_equal(
        tl.nn.log_sigmoid(x).numpy(), np.array([-200.0, -104.0, -90.0, -np.log(2), 0.0], np.float32)
    )
    np.testing.assert_array_equal(
        tl.grad(lambda v: tl.sum(tl.nn.log_sigmoid(v)))(tl.tensor(x)).numpy(), [1.0, 1.0, 1.0, 0.5, 0.0]
    )


def test_silu_gradient_has_no_cancellation_for_large_x():
    x = np.array([20.0, 30.0, -30.0], np.float32)
    xd = x.astype(np.float64)
    s = 1 / (1 + np.exp(-xd))
    want = s * (1 + xd * (1 - s))
    np.testing.assert_allclose(tl.grad(lambda v: tl.sum(tl.nn.silu(v)))(tl.tensor(x)).numpy(), want, rtol=1e-6)
    assert tl.nn.swish is tl.nn.silu


@pytest.mark.parametrize("mode", MODES)
def test_glu_halves_and_gradient(mode):
    x = np.random.default_rng(1).standard_normal((3, 4, 6))
    for axis in (-1, 1, 0):
        a, b = np.split(x, 2, axis) if x.shape[axis] % 2 == 0 else (None, None)
        if a is None:
            continue
        got = run_in_mode(mode, lambda v: tl.nn.glu(v, axis), x)
        np.testing.assert_allclose(got.numpy(), a / (1 + np.exp(-b)), rtol=1e-14)
    tl.testing.check_grads(lambda v: tl.nn.glu(v), [x], order=2)


@pytest.mark.parametrize(
    "call, exc, match",
    [
        (lambda: tl.nn.glu(np.ones((2, 3))), ValueError, r"^glu: the size of axis -1 must be even .*\(2, 3\), float64"),
        (
            lambda: tl.nn.glu(np.ones((2, 4)), axis=2),
            ValueError,
            r"^glu: axis 2 is out of range for a tensor of rank 2",
        ),
        # integers give float64 (DESIGN §6, tests/test_nnint.py); complex is refused, naming the function
        (
            lambda: tl.nn.glu(np.ones(4, np.complex128)),
            TypeError,
            r"^glu: x must be a real tensor, got complex128 \(x shape \(4,\)\)",
        ),
        (
            lambda: tl.nn.relu6(np.array([1 + 0j, 2])),
            TypeError,
            r"^Relu6: features must be a floating-point tensor, got complex128",
        ),
        (lambda: tl.nn.celu(np.ones(2), alpha=0), ValueError, r"^Celu: alpha must not be 0"),
        (lambda: tl.nn.hard_tanh(np.ones(2), 1.0, -1.0), ValueError, r"^HardTanh: min_val must not exceed max_val"),
    ],
)
def test_new_activation_errors(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


# ------------------------------------------------------------------ sigmoid cross entropy, normalizations, embedding
@pytest.mark.parametrize("mode", MODES)
def test_sigmoid_cross_entropy_is_stable_and_its_gradient_at_zero_is_sigmoid_minus_labels(mode):
    z = np.array([1.0, 0.0, 1.0, 0.3, 0.7], np.float32)
    x = np.array([0.0, 100.0, -100.0, 0.0, 1e4], np.float32)
    loss = run_in_mode(mode, lambda z, x: tl.nn.sigmoid_cross_entropy_with_logits(labels=z, logits=x), z, x)
    xd, zd = x.astype(np.float64), z.astype(np.float64)
    np.testing.assert_allclose(loss.numpy(), np.logaddexp(0, xd) - xd * zd, rtol=1e-6)
    assert loss.dtype == np.float32
    gz, gx = tl.grad(lambda z, x: tl.sum(tl.nn.sigmoid_cross_entropy_with_logits(labels=z, logits=x)), argnums=(0, 1))(
        tl.tensor(z), tl.tensor(x)
    )
    np.testing.assert_allclose(gx.numpy(), 1 / (1 + np.exp(-xd)) - zd, rtol=1e-6, atol=1e-30)
    np.testing.assert_array_equal(gz.numpy(), -x)


def test_sigmoid_cross_entropy_matches_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    x, z = rng.standard_normal((4, 5)) * 10, rng.uniform(0, 1, (4, 5))
    t = torch.tensor(x, requires_grad=True)
    want = torch.nn.functional.binary_cross_entropy_with_logits(t, torch.tensor(z), reduction="none")
    (tg,) = torch.autograd.grad(want.sum(), t)
    np.testing.assert_allclose(
        tl.nn.sigmoid_cross_entropy_with_logits(labels=z, logits=x).numpy(), want.detach().numpy(), rtol=1e-14
    )
    g = tl.grad(lambda v: tl.sum(tl.nn.sigmoid_cross_entropy_with_logits(labels=z, logits=v)))(tl.tensor(x))
    np.testing.assert_allclose(g.numpy(), tg.numpy(), rtol=1e-13, atol=1e-16)


@pytest.mark.parametrize("axes", [(-1,), (-2, -1), (1,)])
def test_layer_norm_matches_torch_with_scale_and_offset(axes):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 3, 4)) * 5 + 2
    axes_pos = tuple(a % 3 for a in axes)
    normalized = tuple(x.shape[a] for a in axes_pos)
    w, b, dy = rng.standard_normal(normalized), rng.standard_normal(normalized), rng.standard_normal(x.shape)
    perm = [a for a in range(3) if a not in axes_pos] + list(axes_pos)  # torch normalizes trailing dims only
    tx, tw, tb = (torch.tensor(a, requires_grad=True) for a in (x, w, b))
    ty = torch.nn.functional.layer_norm(tx.permute(perm), normalized, tw, tb, 1e-5).permute(list(np.argsort(perm)))
    ty.backward(torch.tensor(dy))
    y = tl.nn.layer_norm(x, w, b, axis=axes)
    np.testing.assert_allclose(y.numpy(), ty.detach().numpy(), rtol=1e-12, atol=1e-12)
    grads = tl.grad(lambda x, w, b: tl.sum(tl.nn.layer_norm(x, w, b, axis=axes) * dy), argnums=(0, 1, 2))(x, w, b)
    for got, want in zip(grads, (tx.grad, tw.grad, tb.grad)):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-10, atol=1e-12)
    tl.testing.check_grads(lambda x, w: tl.nn.layer_norm(x, w, None, axis=axes), [x, w], order=2)


def test_layer_norm_float16_is_computed_in_float32_and_layer_works_traced():
    x = np.array([[300.0, 310.0, 290.0]], np.float16)  # x**2 overflows float16
    y = tl.nn.layer_norm(x)
    assert y.dtype == np.float16 and np.isfinite(y.numpy()).all()
    ln = tl.nn.LayerNorm((3,))
    xs = np.random.default_rng(4).standard_normal((5, 3)).astype(np.float32)
    np.testing.assert_array_equal(tl.function(ln)(xs).numpy(), ln(xs).numpy())
    with tl.GradientTape() as tape:
        loss = tl.sum(ln(xs) * xs)
    assert [g.shape for g in tape.gradient(loss, [ln.scale, ln.offset])] == [(3,), (3,)]
    with pytest.raises(ValueError, match=r"^LayerNorm: input's trailing dimensions must be normalized_shape=\(3,\)"):
        ln(np.ones((2, 4), np.float32))


def test_group_norm_matches_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    x, w, b = rng.standard_normal((2, 3, 5, 6)), rng.standard_normal(6), rng.standard_normal(6)
    tx = torch.tensor(x.transpose(0, 3, 1, 2), requires_grad=True)
    want = torch.nn.functional.group_norm(tx, 3, torch.tensor(w), torch.tensor(b), 1e-5).detach().numpy()
    np.testing.assert_allclose(tl.nn.group_norm(x, 3, w, b).numpy(), want.transpose(0, 2, 3, 1), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("p", [2.0, 1.0, 3.0, np.inf])
def test_normalize_matches_torch_and_a_zero_vector_has_a_finite_gradient(p):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(6)
    x = rng.standard_normal((3, 4))
    x[1] = 0.0
    dy = rng.standard_normal(x.shape)
    t = torch.tensor(x, requires_grad=True)
    torch.nn.functional.normalize(t, p=p, dim=1).backward(torch.tensor(dy))
    np.testing.assert_allclose(
        tl.nn.normalize(x, p=p).numpy(), torch.nn.functional.normalize(torch.tensor(x), p=p, dim=1).numpy(), rtol=1e-14
    )
    g = tl.grad(lambda v: tl.sum(tl.nn.normalize(v, p=p) * dy))(tl.tensor(x)).numpy()
    np.testing.assert_allclose(g, t.grad.numpy(), rtol=1e-10)
    np.testing.assert_allclose(g[1], dy[1] * 1e12, rtol=1e-12)  # the zero row: 1 / epsilon, not NaN


def test_l2_normalize_matches_tensorflow_semantics():
    x = np.array([[3.0, 4.0], [0.0, 0.0], [1e-7, 0.0]])
    y = tl.nn.l2_normalize(x, axis=1, epsilon=1e-12)
    want = x / np.sqrt(np.maximum((x * x).sum(1, keepdims=True), 1e-12))
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-15)
    g = tl.grad(lambda v: tl.sum(tl.nn.l2_normalize(v, axis=1) * np.array([1.0, 2.0])))(tl.tensor(x)).numpy()
    np.testing.assert_allclose(g[1], [1e6, 2e6], rtol=1e-12)  # zero vector: 1 / sqrt(epsilon)
    assert np.isfinite(g).all()
    big = np.array([300.0, 400.0], np.float16)  # squares overflow float16
    np.testing.assert_allclose(tl.nn.l2_normalize(big).numpy(), [0.6, 0.8], rtol=1e-3)


@pytest.mark.parametrize("mode", MODES)
def test_embedding_lookup_gathers_and_sums_repeated_ids_in_the_gradient(mode):
    table = np.arange(12.0).reshape(4, 3)
    ids = np.array([[1, 3, 1], [0, 1, 1]], np.int32)
    got = run_in_mode(mode, tl.nn.embedding_lookup, table, ids)
    np.testing.assert_array_equal(got.numpy(), table[ids])
    dy = np.random.default_rng(7).standard_normal(ids.shape + (3,))
    g = tl.grad(lambda t: tl.sum(tl.nn.embedding_lookup(t, ids) * dy))(tl.tensor(table)).numpy()
    want = np.zeros_like(table)
    np.add.at(want, ids, dy)
    np.testing.assert_allclose(g, want, rtol=1e-14)


@pytest.mark.parametrize("bad_id", [4, -1])
@pytest.mark.parametrize("mode", MODES)
def test_embedding_lookup_rejects_ids_out_of_range(mode, bad_id):
    table, ids = np.ones((4, 3)), np.array([0, bad_id])
    # Traced, the ids are checked when the graph runs, with the same message (it said "GatherV2: index 4"
    # for an id of -1, mapped past the end so that take would not count it from the end).
    match = (
        rf"^embedding_lookup: id {bad_id} is out of range \[0, 4\) \(params shape \(4, 3\) float64, ids shape \(2,\)"
    )
    with pytest.raises(IndexError, match=match):
        run_in_mode(mode, tl.nn.embedding_lookup, table, ids)
    with pytest.raises(TypeError, match=r"^embedding_lookup: ids must be integers"):
        tl.nn.embedding_lookup(table, np.array([0.0]))


def test_embedding_lookup_traced_with_unknown_table_length_rejects_negative_ids():
    f = tl.function(
        tl.nn.embedding_lookup, input_signature=[tl.TensorSpec((None, 2), "float64"), tl.TensorSpec((None,), "int64")]
    )
    np.testing.assert_array_equal(f(np.eye(2), np.array([1, 0])).numpy(), [[0.0, 1.0], [1.0, 0.0]])
    with pytest.raises(IndexError, match=r"^embedding_lookup: id -3 is out of range \[0, 2\)"):
        f(np.eye(2), np.array([0, -3]))


def test_embedding_layer():
    emb = tl.nn.Embedding(5, 2, seed=0)
    ids = np.array([4, 4, 0])
    with tl.GradientTape() as tape:
        loss = tl.sum(emb(ids))
    np.testing.assert_array_equal(tape.gradient(loss, emb.embeddings).numpy(), [[1, 1], [0, 0], [0, 0], [0, 0], [2, 2]])
    with pytest.raises(IndexError, match=r"embedding_lookup: id 5 is out of range \[0, 5\)"):
        emb(np.array([5]))


# ------------------------------------------------------------------ conv1d and depthwise_conv2d
@pytest.mark.parametrize(
    "strides, padding, dilations", [(1, "VALID", 1), (2, "SAME", 1), (1, "SAME", 2), (2, "VALID", 1)]
)
def test_depthwise_conv2d_matches_torch_groups_conv_with_gradients(strides, padding, dilations):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(8)
    x, w = rng.standard_normal((2, 7, 6, 3)), rng.standard_normal((3, 2, 3, 2))
    (oh, ow), pads = tl.ops.nn._common._geometry((7, 6), (3, 2), (strides,) * 2, (dilations,) * 2, padding)
    tx = torch.tensor(np.pad(x, ((0, 0), pads[0], pads[1], (0, 0))).transpose(0, 3, 1, 2), requires_grad=True)
    tw = torch.tensor(w.transpose(2, 3, 0, 1).reshape(6, 1, 3, 2), requires_grad=True)
    ty = torch.nn.functional.conv2d(tx, tw, stride=strides, dilation=dilations, groups=3)
    dy = rng.standard_normal(ty.shape)
    ty.backward(torch.tensor(dy))
    y = tl.nn.depthwise_conv2d(x, w, strides, padding, dilations)
    np.testing.assert_allclose(y.numpy(), ty.detach().numpy().transpose(0, 2, 3, 1), rtol=1e-12, atol=1e-12)
    dy_nhwc = dy.transpose(0, 2, 3, 1)
    gx, gw = tl.grad(
        lambda x, w: tl.sum(tl.nn.depthwise_conv2d(x, w, strides, padding, dilations) * dy_nhwc), argnums=(0, 1)
    )(x, w)
    want_gx = tx.grad.numpy().transpose(0, 2, 3, 1)[:, pads[0][0] : pads[0][0] + 7, pads[1][0] : pads[1][0] + 6]
    np.testing.assert_allclose(gx.numpy(), want_gx, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(
        gw.numpy(), tw.grad.numpy().reshape(3, 2, 3, 2).transpose(2, 3, 0, 1), rtol=1e-12, atol=1e-12
    )


def test_depthwise_conv2d_traced_with_unknown_batch_and_nchw():
    rng = np.random.default_rng(9)
    x, w = rng.standard_normal((3, 5, 5, 2)).astype(np.float32), rng.standard_normal((3, 3, 2, 1)).astype(np.float32)
    f = tl.function(
        lambda x: tl.nn.depthwise_conv2d(x, w, 1, "SAME"), input_signature=[tl.TensorSpec((None, 5, 5, 2), "float32")]
    )
    eager = tl.nn.depthwise_conv2d(x, w, 1, "SAME")
    np.testing.assert_allclose(f(x).numpy(), eager.numpy(), rtol=1e-6)
    assert eager.dtype == np.float32
    nchw = tl.nn.depthwise_conv2d(x.transpose(0, 3, 1, 2), w, 1, "SAME", data_format="NCHW")
    np.testing.assert_array_equal(nchw.numpy(), eager.numpy().transpose(0, 3, 1, 2))


def test_conv1d_matches_torch_in_both_layouts():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(10)
    x, w = rng.standard_normal((2, 9, 3)), rng.standard_normal((3, 3, 4))
    tx = torch.tensor(x.transpose(0, 2, 1), requires_grad=True)
    tw = torch.tensor(w.transpose(2, 1, 0), requires_grad=True)
    ty = torch.nn.functional.conv1d(tx, tw, stride=2, dilation=2)
    dy = rng.standard_normal(ty.shape)
    ty.backward(torch.tensor(dy))
    y = tl.nn.conv1d(x, w, stride=[1, 2, 1], padding="VALID", dilations=2)
    np.testing.assert_allclose(y.numpy(), ty.detach().numpy().transpose(0, 2, 1), rtol=1e-12)
    gx, gw = tl.grad(lambda x, w: tl.sum(tl.nn.conv1d(x, w, 2, "VALID", 2) * dy.transpose(0, 2, 1)), argnums=(0, 1))(
        x, w
    )
    np.testing.assert_allclose(gx.numpy(), tx.grad.numpy().transpose(0, 2, 1), rtol=1e-12)
    np.testing.assert_allclose(gw.numpy(), tw.grad.numpy().transpose(2, 1, 0), rtol=1e-12)
    ncw = tl.nn.conv1d(x.transpose(0, 2, 1), w, 2, "VALID", 2, data_format="NCW")
    np.testing.assert_array_equal(ncw.numpy(), y.numpy().transpose(0, 2, 1))


@pytest.mark.parametrize(
    "call, exc, match",
    [
        (
            lambda: tl.nn.conv1d(np.ones((1, 5, 2)), np.ones((2, 3, 1)), 1, "VALID"),
            ValueError,
            r"^conv1d: input channels 2 do not match filter in_channels 3 \(input shape \(1, 5, 2\) float64",
        ),
        (
            lambda: tl.nn.conv1d(np.ones((1, 5, 2)), np.ones((2, 2, 1)), 0, "VALID"),
            ValueError,
            r"^conv1d: stride must be a positive int",
        ),
        (
            lambda: tl.nn.conv1d(np.ones((1, 5, 2)), np.ones((2, 2, 1)), 1, "FULL"),
            ValueError,
            r"^conv1d: padding must be 'VALID', 'SAME' or \(left, right\), got 'FULL'",
        ),
        (
            lambda: tl.nn.depthwise_conv2d(np.ones((1, 4, 4, 2)), np.ones((2, 2, 3, 1)), 1, "SAME"),
            ValueError,
            r"^depthwise_conv2d: input depth 2 does not match filter in_channels 3",
        ),
        (
            lambda: tl.nn.depthwise_conv2d(np.ones((4, 4, 2)), np.ones((2, 2, 2, 1)), 1, "SAME"),
            ValueError,
            r"^depthwise_conv2d: input must be 4-D NHWC",
        ),
        (
            lambda: tl.nn.depthwise_conv2d(np.ones((1, 4, 4, 2), np.int64), np.ones((2, 2, 2, 1)), 1, "SAME"),
            TypeError,
            r"^depthwise_conv2d: input and filter must be floating-point",
        ),
    ],
)
def test_conv1d_and_depthwise_errors(call, exc, match):
    with pytest.raises(exc, match=match):
        call()

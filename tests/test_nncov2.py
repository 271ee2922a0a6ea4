"""tl.nn helpers composed from ops: space_to_depth/depth_to_space, l2_loss, log_poisson_loss,
weighted_cross_entropy_with_logits, prelu, instance_norm, in_top_k, max_pool1d/avg_pool1d and
scaled_dot_product_attention, against float64 NumPy formulas, central differences and (where installed)
TensorFlow and PyTorch."""

import math

import numpy as np
import pytest
from _helpers import MODES, run_in_mode

import tensorlib as tl

rng = np.random.default_rng(7)


# ------------------------------------------------------------------ space_to_depth / depth_to_space
def _space_to_depth_ref(x, b):
    n, h, w, c = x.shape
    out = np.empty((n, h // b, w // b, b * b * c), x.dtype)
    for i in range(h // b):
        for j in range(w // b):
            for di in range(b):
                for dj in range(b):
                    out[:, i, j, (di * b + dj) * c : (di * b + dj + 1) * c] = x[:, i * b + di, j * b + dj, :]
    return out


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shape,b", [((2, 4, 6, 3), 2), ((1, 3, 3, 2), 3), ((0, 2, 2, 1), 2)])
def test_space_to_depth_and_back(mode, shape, b):
    x = rng.standard_normal(shape)
    y = run_in_mode(mode, lambda v: tl.nn.space_to_depth(v, b), x)
    np.testing.assert_array_equal(y.numpy(), _space_to_depth_ref(x, b))
    back = run_in_mode(mode, lambda v: tl.nn.depth_to_space(v, b), y.numpy())
    np.testing.assert_array_equal(back.numpy(), x)


def test_space_to_depth_unknown_batch_gradient_and_ints():
    f = tl.function(lambda v: tl.nn.depth_to_space(v, 2), input_signature=[tl.TensorSpec((None, 1, 2, 8))])
    x = rng.standard_normal((3, 1, 2, 8)).astype(np.float32)
    np.testing.assert_array_equal(f(x).numpy(), tl.nn.depth_to_space(x, 2).numpy())
    assert f(x).shape == (3, 2, 4, 2)
    tl.testing.check_grads(lambda v: tl.nn.space_to_depth(v, 2) ** 2, [rng.standard_normal((1, 2, 4, 2))])
    ints = np.arange(16).reshape(1, 4, 4, 1)
    assert tl.nn.space_to_depth(ints, 2).dtype == np.int64


def test_space_to_depth_errors():
    with pytest.raises(ValueError, match=r"^space_to_depth: height 3 and width 4 must be multiples of block_size 2"):
        tl.nn.space_to_depth(np.ones((1, 3, 4, 1)), 2)
    with pytest.raises(ValueError, match=r"^depth_to_space: depth 6 must be a multiple of block_size\*\*2 = 4"):
        tl.nn.depth_to_space(np.ones((1, 1, 1, 6)), 2)
    with pytest.raises(ValueError, match=r"^space_to_depth: block_size must be an int >= 2, got 1"):
        tl.nn.space_to_depth(np.ones((1, 2, 2, 1)), 1)
    with pytest.raises(ValueError, match=r"^depth_to_space: input must be 4-D NHWC \(x shape \(2, 2\)"):
        tl.nn.depth_to_space(np.ones((2, 2)), 2)


def test_space_to_depth_matches_tensorflow():
    tf = pytest.importorskip("tensorflow")
    x = rng.standard_normal((2, 6, 4, 3))
    np.testing.assert_array_equal(tl.nn.space_to_depth(x, 2).numpy(), tf.nn.space_to_depth(x, 2).numpy())
    y = rng.standard_normal((2, 2, 3, 18))
    np.testing.assert_array_equal(tl.nn.depth_to_space(y, 3).numpy(), tf.nn.depth_to_space(y, 3).numpy())


# ------------------------------------------------------------------ losses
@pytest.mark.parametrize("mode", MODES)
def test_l2_loss(mode):
    x = rng.standard_normal((3, 4))
    got = run_in_mode(mode, tl.nn.l2_loss, x)
    assert got.shape == () and got.dtype == np.float64
    np.testing.assert_allclose(float(got), (x**2).sum() / 2, rtol=1e-14)
    assert tl.nn.l2_loss(np.array([1, 2, 3])).dtype == np.float64 and float(tl.nn.l2_loss(np.array([1, 2, 3]))) == 7.0
    big = np.full(1000, 300.0, np.float16)  # 300**2 overflows float16; the sum runs in float32
    assert tl.nn.l2_loss(big).dtype == np.float16 and float(tl.nn.l2_loss(big)) == np.float16(4.5e7 / 1000 * 1000)
    assert float(tl.nn.l2_loss(np.zeros((0, 3)))) == 0.0
    tl.testing.check_grads(tl.nn.l2_loss, [x], order=2)


def _log_poisson_ref(t, li, full):
    loss = np.exp(li) - li * t
    if full:
        with np.errstate(all="ignore"):
            stirling = t * np.log(t) - t + 0.5 * np.log(2 * np.pi * t)
        loss = loss + np.where((t >= 0) & (t <= 1), 0.0, stirling)
    return loss


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("full", [False, True])
def test_log_poisson_loss(mode, full):
    t = np.array([0.0, 0.5, 1.0, 2.0, 7.5])
    li = rng.standard_normal(5)
    got = run_in_mode(mode, lambda a, b: tl.nn.log_poisson_loss(a, b, compute_full_loss=full), t, li)
    np.testing.assert_allclose(got.numpy(), _log_poisson_ref(t, li, full), rtol=1e-13)
    # The targets' gradient is finite at 0 and 1 (0 from the Stirling term there), -log_input elsewhere.
    g_t, g_li = tl.grad(lambda a, b: tl.sum(tl.nn.log_poisson_loss(a, b, full)), argnums=(0, 1))(t, li)
    stirling = np.where(t > 1, np.log(np.where(t > 1, t, 1.0)) + 0.5 / np.where(t > 1, t, 1.0), 0.0)
    np.testing.assert_allclose(g_t.numpy(), -li + (stirling if full else 0.0), rtol=1e-13)
    np.testing.assert_allclose(g_li.numpy(), np.exp(li) - t, rtol=1e-13)
    tl.testing.check_grads(lambda a, b: tl.nn.log_poisson_loss(a, b, full), [t[3:], li[3:]], order=2)


def test_log_poisson_loss_matches_tensorflow_and_errors():
    tf = pytest.importorskip("tensorflow")
    t, li = np.array([0.0, 1.0, 3.0, 10.0]), np.array([-1.0, 0.5, 2.0, 0.0])
    for full in (False, True):
        want = tf.nn.log_poisson_loss(t, li, compute_full_loss=full).numpy()
        np.testing.assert_allclose(tl.nn.log_poisson_loss(t, li, full).numpy(), want, rtol=1e-12)
    with pytest.raises(ValueError, match=r"^log_poisson_loss: targets shape \(3,\) \(float64\) does not match"):
        tl.nn.log_poisson_loss(np.ones(3), np.ones(4))


def _weighted_ce_ref(z, x, w):
    z, x = np.asarray(z, np.float64), np.asarray(x, np.float64)
    return (1 - z) * x + (1 + (w - 1) * z) * np.logaddexp(0.0, -x)


@pytest.mark.parametrize("mode", MODES)
def test_weighted_cross_entropy_with_logits(mode):
    z = rng.uniform(0, 1, (3, 4))
    x = rng.standard_normal((3, 4)) * 4
    x[0] = [0.0, 300.0, -300.0, 1e-3]
    w = rng.uniform(0.2, 3.0, 4)
    got = run_in_mode(mode, tl.nn.weighted_cross_entropy_with_logits, z, x, w)
    np.testing.assert_allclose(got.numpy(), _weighted_ce_ref(z, x, w), rtol=1e-13)
    # d/dx = (1 - z) - (1 + (w - 1) z) sigmoid(-x): at x = 0 too (an |x| + relu form gives 1 - z there).
    g = tl.grad(lambda b: tl.sum(tl.nn.weighted_cross_entropy_with_logits(z, b, w)))(x).numpy()
    np.testing.assert_allclose(g, (1 - z) - (1 + (w - 1) * z) / (1 + np.exp(x)), rtol=1e-12, atol=1e-300)
    tl.testing.check_grads(tl.nn.weighted_cross_entropy_with_logits, [z[1:], x[1:], w], order=2)
    f32 = tl.nn.weighted_cross_entropy_with_logits(z.astype(np.float32), x.astype(np.float32), 2.0)
    assert f32.dtype == np.float32 and np.isfinite(f32.numpy()).all()
    f16 = tl.nn.weighted_cross_entropy_with_logits(np.float16([1.0, 0.0]), np.float16([0.5, -3.0]), 2.0)
    assert f16.dtype == np.float16  # was float32: the Python pos_weight became a float32 tensor
    with pytest.raises(ValueError, match=r"^weighted_cross_entropy_with_logits: labels shape \(2,\)"):
        tl.nn.weighted_cross_entropy_with_logits(np.ones(2), np.ones(3), 1.0)
    got = tl.nn.weighted_cross_entropy_with_logits(np.ones(2), np.array([-1, 3], np.int64), 1.0)  # DESIGN §6
    assert got.dtype == np.float64
    np.testing.assert_allclose(got.numpy(), np.logaddexp(0.0, -np.array([-1.0, 3.0])), rtol=1e-14)
    with pytest.raises(TypeError, match=r"^weighted_cross_entropy_with_logits: logits must be a real tensor"):
        tl.nn.weighted_cross_entropy_with_logits(np.ones(2), np.ones(2, np.complex128), 1.0)


def test_weighted_cross_entropy_gradient_matches_torch():
    torch = pytest.importorskip("torch")
    z, x, w = rng.uniform(0, 1, (2, 3)), rng.standard_normal((2, 3)), rng.uniform(0.5, 2, 3)
    x[0, 0] = 0.0
    xt, zt = torch.tensor(x, requires_grad=True), torch.tensor(z, requires_grad=True)
    torch.nn.functional.binary_cross_entropy_with_logits(xt, zt, pos_weight=torch.tensor(w), reduction="sum").backward()
    gz, gx = tl.grad(lambda a, b: tl.sum(tl.nn.weighted_cross_entropy_with_logits(a, b, w)), argnums=(0, 1))(z, x)
    np.testing.assert_allclose(gx.numpy(), xt.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(gz.numpy(), zt.grad.numpy(), rtol=1e-12)


# ------------------------------------------------------------------ prelu and instance_norm
@pytest.mark.parametrize("mode", MODES)
def test_prelu(mode):
    x = rng.standard_normal((2, 3, 4))
    x[0, 0, 0] = 0.0
    alpha = rng.uniform(0, 1, 4)
    got = run_in_mode(mode, tl.nn.prelu, x, alpha)
    np.testing.assert_array_equal(got.numpy(), np.where(x > 0, x, alpha * x))
    gx, ga = tl.grad(lambda a, b: tl.sum(tl.nn.prelu(a, b)), argnums=(0, 1))(x, alpha)
    np.testing.assert_array_equal(gx.numpy(), np.where(x > 0, 1.0, alpha * np.ones_like(x)))  # alpha at 0: torch's
    np.testing.assert_allclose(ga.numpy(), np.where(x > 0, 0.0, x).sum((0, 1)), rtol=1e-13)
    x[0, 0, 0] = 0.5
    tl.testing.check_grads(tl.nn.prelu, [x, alpha])
    with pytest.raises(ValueError, match=r"^prelu: alpha shape \(3,\) does not broadcast to x shape \(2, 3, 4\)"):
        tl.nn.prelu(x, np.ones(3))
    got = tl.nn.prelu(np.array([-3, 0, 2], np.int64), 0.1)  # DESIGN §6: integers give float64
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got.numpy(), [-3 * 0.1, 0.0, 2.0])
    with pytest.raises(TypeError, match=r"^prelu: x must be a real tensor, got complex128"):
        tl.nn.prelu(np.ones(3, np.complex128), 0.1)


def _instance_norm_ref(x, scale, offset, eps):
    axes = tuple(range(1, x.ndim - 1))
    return (x - x.mean(axes, keepdims=True)) / np.sqrt(x.var(axes, keepdims=True) + eps) * scale + offset


@pytest.mark.parametrize("mode", MODES)
def test_instance_norm(mode):
    x = rng.standard_normal((2, 3, 4, 5)) * 3 + 1
    scale, offset = rng.standard_normal(5), rng.standard_normal(5)
    got = run_in_mode(mode, lambda a, b, c: tl.nn.instance_norm(a, b, c, epsilon=1e-3), x, scale, offset)
    np.testing.assert_allclose(got.numpy(), _instance_norm_ref(x, scale, offset, 1e-3), rtol=1e-12, atol=1e-12)
    tl.testing.check_grads(lambda a, b, c: tl.nn.instance_norm(a, b, c, 0.1), [x[:1, :2, :3], scale, offset])
    assert tl.nn.instance_norm(x.astype(np.float16)).dtype == np.float16
    with pytest.raises(ValueError, match=r"^instance_norm: x must be \(batch, spatial\.\.\., channels\)"):
        tl.nn.instance_norm(np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"^instance_norm: scale shape \(4,\) does not match"):
        tl.nn.instance_norm(x, np.ones(4))


def test_instance_norm_matches_torch():
    torch = pytest.importorskip("torch")
    x = rng.standard_normal((2, 3, 4, 5))
    want = torch.nn.functional.instance_norm(torch.tensor(x.transpose(0, 3, 1, 2))).numpy().transpose(0, 2, 3, 1)
    np.testing.assert_allclose(tl.nn.instance_norm(x).numpy(), want, rtol=1e-10, atol=1e-12)


# ------------------------------------------------------------------ in_top_k
def _in_top_k_ref(targets, predictions, k):
    out = []
    for t, row in zip(targets, predictions):
        ok = 0 <= t < row.size and np.isfinite(row).all()
        out.append(bool(ok and (row > row[t]).sum() < k))
    return np.array(out, bool)


@pytest.mark.parametrize("mode", MODES)
def test_in_top_k(mode):
    p = np.array([[0.1, 0.9, 0.5], [0.5, 0.5, 0.1], [0.3, 0.2, 0.1], [1.0, np.nan, 0.0], [1.0, 2.0, 3.0]])
    t = np.array([2, 0, 2, 0, 5])
    for k in (0, 1, 2, 3):
        got = run_in_mode(mode, lambda a, b, k=k: tl.nn.in_top_k(a, b, k), t, p)
        assert got.dtype == np.bool_
        np.testing.assert_array_equal(got.numpy(), _in_top_k_ref(t, p, k))
    for _ in range(20):  # many ties
        p = rng.integers(0, 3, (4, 5)).astype(np.float32)
        t, k = rng.integers(-1, 6, 4), int(rng.integers(0, 6))
        np.testing.assert_array_equal(tl.nn.in_top_k(t, p, k).numpy(), _in_top_k_ref(t, p, k))
    assert tl.nn.in_top_k(np.array([0, 1]), np.zeros((2, 0)), 1).numpy().tolist() == [False, False]
    with pytest.raises(ValueError, match=r"^in_top_k: targets must be a 1-D integer tensor"):
        tl.nn.in_top_k(np.array([0.0]), np.ones((1, 2)), 1)
    with pytest.raises(ValueError, match=r"^in_top_k: targets and predictions must have the same batch size"):
        tl.nn.in_top_k(np.array([0, 1]), np.ones((1, 2)), 1)


def test_in_top_k_matches_tensorflow():
    tf = pytest.importorskip("tensorflow")
    p = np.array([[1.0, 2.0, np.inf], [1.0, 1.0, 1.0], [3.0, 2.0, 2.0], [0.0, 0.0, -1.0]], np.float32)
    t = np.array([1, 2, 1, 2], np.int32)
    for k in (0, 1, 2, 3):
        np.testing.assert_array_equal(tl.nn.in_top_k(t, p, k).numpy(), tf.math.in_top_k(t, p, k).numpy())


# ------------------------------------------------------------------ max_pool1d / avg_pool1d
def _pool1d_ref(x, k, s, padding, kind):
    n, w, c = x.shape
    if padding == "VALID":
        out_w, left = (w - k) // s + 1, 0
    else:
        out_w = -(-w // s)
        left = max((out_w - 1) * s + k - w, 0) // 2
    out = np.empty((n, out_w, c))
    for i in range(out_w):
        lo, hi = max(i * s - left, 0), min(i * s - left + k, w)
        win = x[:, lo:hi, :]
        out[:, i] = win.max(1) if kind == "max" else win.mean(1)
    return out


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("k,s,padding", [(2, 2, "VALID"), (3, 1, "SAME"), (3, 2, "SAME"), (1, 3, "VALID")])
def test_pool1d(mode, k, s, padding):
    x = rng.standard_normal((2, 7, 3))
    for kind, fn in (("max", tl.nn.max_pool1d), ("avg", tl.nn.avg_pool1d)):
        got = run_in_mode(mode, lambda v, fn=fn: fn(v, k, s, padding), x)
        np.testing.assert_allclose(got.numpy(), _pool1d_ref(x, k, s, padding, kind), rtol=1e-13)
        ncw = run_in_mode(
            mode, lambda v, fn=fn: fn(v, [1, k, 1], [s], padding, data_format="NCW"), x.transpose(0, 2, 1)
        )
        np.testing.assert_allclose(ncw.numpy().transpose(0, 2, 1), got.numpy(), rtol=1e-13)
    tl.testing.check_grads(lambda v: tl.nn.avg_pool1d(v, k, s, padding), [x])
    tl.testing.check_grads(lambda v: tl.nn.max_pool1d(v, k, s, padding), [x])


def test_pool1d_errors():
    with pytest.raises(ValueError, match=r"^max_pool1d: input must be 3-D \(NWC\) \(x shape \(2, 4\)"):
        tl.nn.max_pool1d(np.ones((2, 4)), 2, 2, "VALID")
    with pytest.raises(ValueError, match=r"^avg_pool1d: ksize must be a positive int"):
        tl.nn.avg_pool1d(np.ones((1, 4, 1)), 0, 2, "VALID")
    with pytest.raises(ValueError, match=r"^avg_pool1d: data_format must be 'NWC' or 'NCW'"):
        tl.nn.avg_pool1d(np.ones((1, 4, 1)), 2, 2, "VALID", data_format="NHWC")


# ------------------------------------------------------------------ scaled_dot_product_attention
def _sdpa_ref(q, k, v, mask=None, causal=False, scale=None):
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    s = q @ np.swapaxes(k, -1, -2) * scale
    if causal:
        mask = np.tril(np.ones(s.shape[-2:], bool))
    if mask is not None:
        s = np.where(mask, s, -np.inf) if mask.dtype == bool else s + mask
    with np.errstate(invalid="ignore"):
        e = np.exp(s - s.max(-1, keepdims=True))
        w = np.nan_to_num(e / e.sum(-1, keepdims=True))  # a fully masked row: weights 0 (PyTorch)
    return w @ v


@pytest.mark.parametrize("mode", MODES)
def test_scaled_dot_product_attention(mode):
    q, k, v = rng.standard_normal((2, 3, 4, 5)), rng.standard_normal((2, 3, 6, 5)), rng.standard_normal((2, 3, 6, 2))
    bool_mask = rng.random((4, 6)) < 0.6
    bool_mask[1] = False  # a fully masked query row
    float_mask = rng.standard_normal((3, 4, 6))
    cases = [
        ({}, {}),
        ({"is_causal": True}, {"causal": True}),
        ({"scale": 0.3}, {"scale": 0.3}),
        ({"attn_mask": bool_mask}, {"mask": bool_mask}),
        ({"attn_mask": float_mask}, {"mask": float_mask}),
    ]
    for kwargs, ref in cases:
        got = run_in_mode(mode, lambda a, b, c, kw=kwargs: tl.nn.scaled_dot_product_attention(a, b, c, **kw), q, k, v)
        np.testing.assert_allclose(got.numpy(), _sdpa_ref(q, k, v, **ref), rtol=1e-12, atol=1e-14)

        def loss(a, b, c, kw=kwargs):
            return tl.sum(tl.nn.scaled_dot_product_attention(a, b, c, **kw))

        grads = tl.grad(loss, argnums=(0, 1, 2))(q, k, v)
        assert all(np.isfinite(g.numpy()).all() for g in grads)
    small = [a[:1, :1] for a in (q, k, v)]
    tl.testing.check_grads(lambda *a: tl.nn.scaled_dot_product_attention(*a, attn_mask=bool_mask), small, order=2)
    tl.testing.check_grads(lambda *a: tl.nn.scaled_dot_product_attention(*a, is_causal=True), small)


def test_scaled_dot_product_attention_matches_torch():
    torch = pytest.importorskip("torch")
    q, k, v = rng.standard_normal((2, 4, 3)), rng.standard_normal((2, 5, 3)), rng.standard_normal((2, 5, 2))
    mask = rng.random((4, 5)) < 0.5
    mask[2] = False
    w = rng.standard_normal((2, 4, 2))
    for kwargs in ({"attn_mask": mask}, {"is_causal": True}, {"scale": 2.0}):
        ts = [torch.tensor(a, requires_grad=True) for a in (q, k, v)]
        tkw = {**kwargs, "attn_mask": torch.tensor(mask)} if "attn_mask" in kwargs else kwargs
        y = torch.nn.functional.scaled_dot_product_attention(*ts, **tkw)
        (y * torch.tensor(w)).sum().backward()
        np.testing.assert_allclose(
            tl.nn.scaled_dot_product_attention(q, k, v, **kwargs).numpy(), y.detach().numpy(), rtol=1e-12, atol=1e-14
        )

        def loss(a, b, c, kw=kwargs):
            return tl.sum(tl.nn.scaled_dot_product_attention(a, b, c, **kw) * w)

        ours = tl.grad(loss, argnums=(0, 1, 2))
        for got, t in zip(ours(q, k, v), ts):
            np.testing.assert_allclose(got.numpy(), t.grad.numpy(), rtol=1e-10, atol=1e-13)


def test_scaled_dot_product_attention_errors():
    q = np.ones((2, 3, 4))
    with pytest.raises(ValueError, match=r"^scaled_dot_product_attention: query and key must share the last dim"):
        tl.nn.scaled_dot_product_attention(q, np.ones((2, 3, 5)), np.ones((2, 3, 4)))
    with pytest.raises(ValueError, match=r"^scaled_dot_product_attention: give attn_mask or is_causal, not both"):
        tl.nn.scaled_dot_product_attention(q, q, q, np.ones((3, 3), bool), is_causal=True)
    with pytest.raises(TypeError, match=r"^scaled_dot_product_attention: query, key and value must be floating"):
        tl.nn.scaled_dot_product_attention(q.astype(np.int64), q, q)
    with pytest.raises(TypeError, match=r"^scaled_dot_product_attention: attn_mask must be bool or floating"):
        tl.nn.scaled_dot_product_attention(q, q, q, np.ones((3, 3), np.int64))


# ------------------------------------------------------------------ normalize_moments and resize
def test_normalize_moments():
    x = rng.standard_normal((6, 3))
    shift = np.array([0.5, -1.0, 2.0])
    for s in (None, shift):
        c = x - (0 if s is None else s)
        mean, var = tl.nn.normalize_moments(6, c.sum(0), (c**2).sum(0), s)
        np.testing.assert_allclose(mean.numpy(), x.mean(0), rtol=1e-13)
        np.testing.assert_allclose(var.numpy(), x.var(0), rtol=1e-12)
    mean, var = tl.nn.normalize_moments(4.0, np.float32([16.0]), np.float32([84.0]))
    assert mean.dtype == var.dtype == np.float32 and var.numpy().tolist() == [5.0]


def _resize_ref(x, size, method):
    """Per output pixel, TensorFlow 2's half-pixel rule written out."""
    n, h, w, c = x.shape
    out = np.empty((n, *size, c))
    for i in range(size[0]):
        for j in range(size[1]):
            ys, xs = (i + 0.5) * h / size[0], (j + 0.5) * w / size[1]
            if method == "nearest":
                out[:, i, j] = x[:, min(math.floor(ys), h - 1), min(math.floor(xs), w - 1)]
                continue
            ys, xs = ys - 0.5, xs - 0.5
            y0, x0 = math.floor(ys), math.floor(xs)
            dy, dx = ys - y0, xs - x0
            ya, yb = max(y0, 0), min(y0 + 1, h - 1)
            xa, xb = max(x0, 0), min(x0 + 1, w - 1)
            top = x[:, ya, xa] * (1 - dx) + x[:, ya, xb] * dx
            bottom = x[:, yb, xa] * (1 - dx) + x[:, yb, xb] * dx
            out[:, i, j] = top * (1 - dy) + bottom * dy
    return out


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("size", [(5, 7), (2, 3), (1, 1), (4, 4), (3, 8)])
def test_resize(mode, size):
    x = rng.standard_normal((2, 4, 4, 2))
    for method in ("bilinear", "nearest"):
        got = run_in_mode(mode, lambda v, m=method: tl.nn.resize(v, size, m), x)
        np.testing.assert_allclose(got.numpy(), _resize_ref(x, size, method), rtol=1e-12, atol=1e-14)
    tl.testing.check_grads(lambda v: tl.nn.resize(v, size), [x[:1]], order=2)


def test_resize_dtypes_and_errors():
    img = rng.standard_normal((3, 5, 2)).astype(np.float32)
    y = tl.nn.resize(img, (6, 4))
    assert y.shape == (6, 4, 2) and y.dtype == np.float32
    np.testing.assert_allclose(
        y.numpy(), _resize_ref(img[None].astype(np.float64), (6, 4), "bilinear")[0], rtol=1e-5, atol=1e-6
    )
    ints = np.arange(6).reshape(1, 2, 3, 1)
    assert tl.nn.resize(ints, (4, 6), "nearest").dtype == np.int64
    assert tl.nn.resize(ints, (4, 6)).dtype == np.float64
    with pytest.raises(ValueError, match=r"^resize: method must be 'bilinear' or 'nearest', got 'bicubic'"):
        tl.nn.resize(img, (2, 2), "bicubic")
    with pytest.raises(ValueError, match=r"^resize: images must be 3-D \(h, w, c\) or 4-D"):
        tl.nn.resize(np.ones((2, 2)), (2, 2))
    with pytest.raises(ValueError, match=r"^resize: size must be positive, got \(0, 2\)"):
        tl.nn.resize(img, (0, 2))


def test_resize_matches_tensorflow():
    tf = pytest.importorskip("tensorflow")
    x = rng.standard_normal((2, 5, 3, 2)).astype(np.float32)
    for size in ((7, 2), (2, 9), (5, 3)):
        for method in ("bilinear", "nearest"):
            want = tf.image.resize(x, size, method=method).numpy()
            np.testing.assert_allclose(tl.nn.resize(x, size, method).numpy(), want, rtol=1e-5, atol=1e-6)

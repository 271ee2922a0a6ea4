"""tl.nn.conv3d, max_pool3d and avg_pool3d (compositions of the 2-D ops) against a float64 NumPy loop
reference, TensorFlow and PyTorch (when installed): values, gradients, tracing and errors."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorlib as tl
from tensorlib.testing import check_grads


# ---------------------------------------------------------------- float64 NumPy loop references
def _axis(n, k, s, d, padding):
    """(output size, (before, after)) of one axis, TensorFlow's rules."""
    ek = (k - 1) * d + 1
    if padding == "SAME":
        out = -(-n // s)
        total = max((out - 1) * s + ek - n, 0)
        return out, (total // 2, total - total // 2)
    pad = (0, 0) if padding == "VALID" else padding
    return (n + pad[0] + pad[1] - ek) // s + 1, pad


def _geometry(dhw, window, strides, dilations, padding):
    return [
        _axis(n, k, s, d, padding if isinstance(padding, str) else padding[i])
        for i, (n, k, s, d) in enumerate(zip(dhw, window, strides, dilations))
    ]


def _conv3d_ref(x, w, strides, padding, dilations=(1, 1, 1)):
    x, w = np.asarray(x, np.float64), np.asarray(w, np.float64)
    geo = _geometry(x.shape[1:4], w.shape[:3], strides, dilations, padding)
    xp = np.pad(x, ((0, 0), *(g[1] for g in geo), (0, 0)))
    out = [g[0] for g in geo]
    y = np.zeros((x.shape[0], *out, w.shape[4]))
    for o in np.ndindex(*out):
        for t in np.ndindex(*w.shape[:3]):
            at = tuple(o[i] * strides[i] + t[i] * dilations[i] for i in range(3))
            y[:, o[0], o[1], o[2]] += xp[:, at[0], at[1], at[2]] @ w[t]
    return y


def _pool3d_ref(x, ksize, strides, padding, kind):
    x = np.asarray(x, np.float64)
    geo = _geometry(x.shape[1:4], ksize, strides, (1, 1, 1), padding)
    y = np.zeros((x.shape[0], *(g[0] for g in geo), x.shape[4]))
    for o in np.ndindex(*y.shape[1:4]):
        lo = [o[i] * strides[i] - geo[i][1][0] for i in range(3)]
        cells = tuple(slice(max(lo[i], 0), min(lo[i] + ksize[i], x.shape[1 + i])) for i in range(3))
        window = x[:, cells[0], cells[1], cells[2]]  # only the real cells: padding never wins or counts
        y[:, o[0], o[1], o[2]] = window.max((1, 2, 3)) if kind == "max" else window.mean((1, 2, 3))
    return y


def _ncdhw(a):
    return np.transpose(a, (0, 4, 1, 2, 3))


def _ndhwc(a):
    return np.transpose(a, (0, 2, 3, 4, 1))


# ---------------------------------------------------------------- values
@st.composite
def _conv_case(draw):
    dhw = tuple(draw(st.integers(1, 5)) for _ in range(3))
    k = tuple(draw(st.integers(1, 3)) for _ in range(3))
    s = tuple(draw(st.integers(1, 4)) for _ in range(3))  # strides > kernel included
    d = tuple(draw(st.integers(1, 2)) for _ in range(3))
    padding = draw(
        st.one_of(
            st.sampled_from(["SAME", "VALID"]),
            st.tuples(*[st.tuples(st.integers(0, 2), st.integers(0, 2))] * 3),
        )
    )
    if padding != "SAME":
        pads = [(0, 0)] * 3 if padding == "VALID" else padding
        dhw = tuple(max(n, (kk - 1) * dd + 1 - sum(p)) for n, kk, dd, p in zip(dhw, k, d, pads))
    n, cin, cout = draw(st.integers(1, 2)), draw(st.integers(1, 3)), draw(st.integers(1, 3))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    return rng.standard_normal((n, *dhw, cin)), rng.standard_normal((*k, cin, cout)), s, padding, d


@settings(max_examples=40, deadline=None)
@given(_conv_case())
def test_conv3d_matches_loop_reference(case):
    x, w, s, padding, d = case
    want = _conv3d_ref(x, w, s, padding, d)
    got = tl.nn.conv3d(x, w, s, padding, dilations=d)
    assert got.shape == want.shape and got.dtype == tl.float64
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-12)
    got = tl.nn.conv3d(_ncdhw(x), w, (1, 1, *s), padding, "NCDHW", (1, 1, *d))
    np.testing.assert_allclose(_ndhwc(got.numpy()), want, rtol=1e-12, atol=1e-12)


@st.composite
def _pool_case(draw):
    dhw = tuple(draw(st.integers(1, 5)) for _ in range(3))
    padding = draw(st.sampled_from(["SAME", "VALID"]))
    k = tuple(draw(st.integers(1, 3 if padding == "SAME" else n)) for n in dhw)
    s = tuple(draw(st.integers(1, 4)) for _ in range(3))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    return rng.standard_normal((draw(st.integers(1, 2)), *dhw, 2)), k, s, padding


@settings(max_examples=40, deadline=None)
@given(_pool_case())
def test_pool3d_matches_loop_reference(case):
    x, k, s, padding = case
    for kind, pool in (("max", tl.nn.max_pool3d), ("avg", tl.nn.avg_pool3d)):
        want = _pool3d_ref(x, k, s, padding, kind)
        np.testing.assert_allclose(pool(x, k, s, padding).numpy(), want, rtol=1e-13, atol=1e-13)
        got = pool(_ncdhw(x), (1, 1, *k), (1, 1, *s), padding, "NCDHW")
        np.testing.assert_allclose(_ndhwc(got.numpy()), want, rtol=1e-13, atol=1e-13)


def test_avg_pool3d_same_counts_only_real_cells():
    # a 2x2x2 window at the far corner of a 3x3x3 SAME pool (stride 2) holds one real cell: its own value
    x = np.arange(27.0).reshape(1, 3, 3, 3, 1)
    y = tl.nn.avg_pool3d(x, 2, 2, "SAME").numpy()[0, ..., 0]
    assert y[1, 1, 1] == 26.0 and y[0, 1, 1] == np.mean([8.0, 17.0])
    # padded cells never win the max, even when every real cell is negative
    assert tl.nn.max_pool3d(-1.0 - x, 2, 2, "SAME").numpy()[0, 1, 1, 1, 0] == -27.0


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dtypes_and_edge_shapes(dtype):
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal((1, 3, 4, 2, 2)).astype(dtype), rng.standard_normal((1, 1, 1, 2, 3)).astype(dtype)
    y = tl.nn.conv3d(x, w, 1, "VALID")  # 1x1x1 kernel, batch 1: a matmul over the channels
    assert y.numpy().dtype == dtype
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(y.numpy(), x.astype(np.float64) @ w[0, 0, 0].astype(np.float64), rtol=tol, atol=tol)
    assert tl.nn.conv3d(np.zeros((0, 3, 4, 2, 2), dtype), w, 2, "SAME").shape == (0, 2, 2, 1, 3)
    for pool in (tl.nn.max_pool3d, tl.nn.avg_pool3d):
        assert pool(x, 2, 1, "SAME").numpy().dtype == dtype
        assert pool(np.zeros((0, 3, 4, 2, 2), dtype), 2, 2, "SAME").shape == (0, 2, 2, 1, 2)


def test_inputs_are_not_modified():
    rng = np.random.default_rng(2)
    x, w = rng.standard_normal((1, 3, 3, 3, 2)), rng.standard_normal((2, 2, 2, 2, 2))
    x0, w0 = x.copy(), w.copy()
    tl.nn.conv3d(x, w, 2, "SAME")
    tl.nn.max_pool3d(x, 2, 2, "SAME")
    tl.nn.avg_pool3d(x, 2, 2, "SAME")
    assert np.array_equal(x, x0) and np.array_equal(w, w0)


# ---------------------------------------------------------------- gradients and tracing
def test_gradients_match_finite_differences():
    rng = np.random.default_rng(3)
    x, w = rng.standard_normal((1, 4, 3, 4, 2)), rng.standard_normal((2, 2, 3, 2, 2))
    check_grads(lambda a, b: tl.nn.conv3d(a, b, (2, 1, 2), "SAME", dilations=(1, 2, 1)), (x, w), order=2)
    check_grads(lambda a, b: tl.nn.conv3d(a, b, 1, ((1, 0), (0, 1), (2, 0))), (x, w), modes=("rev",))
    check_grads(lambda a: tl.nn.avg_pool3d(a, (2, 3, 2), (2, 1, 3), "SAME"), (x,))
    check_grads(lambda a: tl.nn.max_pool3d(a, (3, 2, 2), (2, 2, 1), "SAME"), (x,), modes=("rev",))


def test_max_pool3d_tie_gradient_goes_to_first_maximum():
    # as tl.nn.max_pool and PyTorch: one winner per window, the first in (depth, height, width) order
    g = tl.grad(lambda a: tl.sum(tl.nn.max_pool3d(a, 2, 2, "VALID")))(tl.tensor(np.ones((1, 2, 2, 2, 1))))
    want = np.zeros((1, 2, 2, 2, 1))
    want[0, 0, 0, 0, 0] = 1.0
    np.testing.assert_array_equal(g.numpy(), want)


@pytest.mark.parametrize("fmt", ["NDHWC", "NCDHW"])
def test_traced_equals_eager_for_any_batch(fmt):
    rng = np.random.default_rng(4)
    x, w = rng.standard_normal((2, 5, 4, 6, 3)), rng.standard_normal((3, 2, 2, 3, 4))
    x = x if fmt == "NDHWC" else _ncdhw(x)
    calls = (
        lambda a: tl.nn.conv3d(a, w, (2, 1, 2), "SAME", fmt, (1, 2, 1)),
        lambda a: tl.nn.max_pool3d(a, (2, 3, 2), (2, 1, 3), "SAME", fmt),
        lambda a: tl.nn.avg_pool3d(a, (2, 3, 2), (2, 1, 3), "SAME", fmt),
    )
    spec = [tl.TensorSpec((None, *x.shape[1:]), "float64")]
    for f in calls:
        eager = f(x).numpy()
        traced = tl.function(f, input_signature=spec)
        np.testing.assert_array_equal(traced(x).numpy(), eager)
        np.testing.assert_array_equal(traced(x[:1]).numpy(), eager[:1])
        grad = tl.grad(lambda a, f=f: tl.sum(f(a) ** 2))
        np.testing.assert_allclose(tl.function(grad)(x).numpy(), grad(tl.tensor(x)).numpy(), rtol=1e-12)


def test_empty_volume_with_unknown_batch_is_one_clear_error():
    spec = [tl.TensorSpec((None, 0, 3, 3, 2), "float64")]
    for name, f in (
        ("conv3d", lambda a: tl.nn.conv3d(a, np.ones((1, 1, 1, 2, 3)), 1, "SAME")),
        ("max_pool3d", lambda a: tl.nn.max_pool3d(a, 2, 2, "SAME")),
    ):
        with pytest.raises(ValueError, match=rf"^{name}: an empty volume needs a known batch size"):
            tl.function(f, input_signature=spec)(np.ones((2, 0, 3, 3, 2)))


# ---------------------------------------------------------------- peers
def test_against_tensorflow():
    tf = pytest.importorskip("tensorflow")
    rng = np.random.default_rng(5)
    # float32: TensorFlow's float64 CPU Conv3D is off for some strided SAME shapes (e.g. width 3, stride 3), and
    # TF 2.21's float32 one too where a filter width of 1 meets a width stride of 3 on a width divisible by 3
    # (1x2x3x3x2 input, 3x3x1 filter, strides 2x1x3: off by up to 8.6 against a float64 sliding-window sum)
    for shape, k, s, padding in [
        ((2, 5, 4, 6, 3), (3, 2, 2), (2, 1, 3), "SAME"),
        ((1, 2, 3, 4, 2), (3, 3, 1), (2, 1, 3), "SAME"),
        ((1, 4, 5, 3, 2), (2, 3, 1), (3, 4, 2), "VALID"),
        ((2, 3, 3, 3, 1), (1, 1, 1), (1, 1, 1), "SAME"),
    ]:
        x = rng.standard_normal(shape).astype(np.float32)
        w = rng.standard_normal((*k, shape[4], 2)).astype(np.float32)
        want = tf.nn.conv3d(x, w, (1, *s, 1), padding).numpy()
        np.testing.assert_allclose(tl.nn.conv3d(x, w, (1, *s, 1), padding).numpy(), want, rtol=1e-4, atol=1e-4)
        for mine, theirs in ((tl.nn.max_pool3d, tf.nn.max_pool3d), (tl.nn.avg_pool3d, tf.nn.avg_pool3d)):
            want = theirs(x, (1, *k, 1), (1, *s, 1), padding).numpy()
            np.testing.assert_allclose(mine(x, (1, *k, 1), (1, *s, 1), padding).numpy(), want, rtol=1e-6, atol=1e-6)


def test_against_torch_values_and_gradients():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(6)
    x, w = rng.standard_normal((2, 3, 5, 4, 6)), rng.standard_normal((2, 3, 2, 3, 4))  # NCDHW input, DHWIO filter
    s, pad, d = (2, 1, 3), (1, 0, 2), (2, 1, 1)
    xt, wt = torch.tensor(x, requires_grad=True), torch.tensor(w.transpose(4, 3, 0, 1, 2).copy(), requires_grad=True)
    yt = torch.nn.functional.conv3d(xt, wt, stride=s, padding=pad, dilation=d)
    dy = rng.standard_normal(tuple(yt.shape))
    yt.backward(torch.tensor(dy))
    explicit = tuple((p, p) for p in pad)

    def f(a, b):
        return tl.nn.conv3d(a, b, s, explicit, "NCDHW", d)

    np.testing.assert_allclose(f(x, w).numpy(), yt.detach().numpy(), rtol=1e-12, atol=1e-12)
    gx, gw = tl.grad(lambda a, b: tl.sum(f(a, b) * dy), argnums=(0, 1))(tl.tensor(x), tl.tensor(w))
    np.testing.assert_allclose(gx.numpy(), xt.grad.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(gw.numpy(), wt.grad.numpy().transpose(2, 3, 4, 1, 0), rtol=1e-12, atol=1e-12)
    for mine, theirs in (
        (tl.nn.max_pool3d, torch.nn.functional.max_pool3d),
        (tl.nn.avg_pool3d, torch.nn.functional.avg_pool3d),
    ):
        xt = torch.tensor(x, requires_grad=True)
        yt = theirs(xt, (2, 3, 2), (1, 2, 3))
        yt.backward(torch.ones_like(yt))
        g = tl.grad(lambda a, pool=mine: tl.sum(pool(a, (2, 3, 2), (1, 2, 3), "VALID", "NCDHW")))(tl.tensor(x))
        np.testing.assert_allclose(g.numpy(), xt.grad.numpy(), rtol=1e-12, atol=1e-12)


# ---------------------------------------------------------------- errors: one clear exception per bad argument
_X, _W = np.ones((2, 4, 5, 6, 3)), np.ones((2, 3, 2, 3, 4))


@pytest.mark.parametrize(
    ("call", "exc", "match"),
    [
        (lambda: tl.nn.conv3d(_X[0], _W, 1, "SAME"), ValueError, r"^conv3d: input must be 5-D NDHWC"),
        (lambda: tl.nn.conv3d(_X, _W[0], 1, "SAME"), ValueError, r"^conv3d: input must be 5-D .* filters 5-D DHWIO"),
        (lambda: tl.nn.conv3d(_X, _W[:, :, :, :2], 1, "SAME"), ValueError, r"^conv3d: input channels 3 do not match"),
        (
            lambda: tl.nn.conv3d(_X.astype(np.int32), _W.astype(np.int32), 1, "SAME"),
            TypeError,
            r"^conv3d: .*floating-point.*int32",
        ),
        (lambda: tl.nn.conv3d(_X, _W, 1, "SAME", "NHWC"), ValueError, r"^conv3d: data_format must be 'NDHWC' or"),
        (lambda: tl.nn.conv3d(_X, _W, (1, 2), "SAME"), ValueError, r"^conv3d: strides must be .*\(2, 4, 5, 6, 3\)"),
        (lambda: tl.nn.conv3d(_X, _W, (2, 1, 1, 1, 1), "SAME"), ValueError, r"^conv3d: strides must be"),
        (lambda: tl.nn.conv3d(_X, _W, 1, "SAME", dilations=0), ValueError, r"^conv3d: dilations must be"),
        (lambda: tl.nn.conv3d(_X, _W, 1, "FULL"), ValueError, r"^conv3d: padding must be"),
        (lambda: tl.nn.conv3d(_X, _W, 1, ((1, 1), (-1, 0), (0, 0))), ValueError, r"^conv3d: padding must be"),
        (lambda: tl.nn.conv3d(_X, np.ones((5, 1, 1, 3, 1)), 1, "VALID"), ValueError, r"^conv3d: depth: .*kernel"),
        (lambda: tl.nn.conv3d(_X, np.ones((0, 1, 1, 3, 1)), 1, "VALID"), ValueError, r"^conv3d: filter must not"),
        (lambda: tl.nn.max_pool3d(_X[0], 2, 1, "VALID"), ValueError, r"^max_pool3d: input must be 5-D NDHWC"),
        (lambda: tl.nn.max_pool3d(_X.astype(np.int64), 2, 1, "VALID"), TypeError, r"^max_pool3d: .*floating-point"),
        (lambda: tl.nn.avg_pool3d(_X, (2, 2, 2, 2, 2), 1, "VALID"), ValueError, r"^avg_pool3d: ksize must be"),
        (lambda: tl.nn.avg_pool3d(_X, 2, 1, ((0, 0),) * 3), ValueError, r"^avg_pool3d: padding must be 'VALID' or"),
        (lambda: tl.nn.avg_pool3d(_X, 2, 1, "VALID", "NCHW"), ValueError, r"^avg_pool3d: data_format must be"),
        (lambda: tl.nn.max_pool3d(_X, (5, 1, 1), 1, "VALID"), ValueError, r"^max_pool3d: depth: .*\(2, 4, 5, 6, 3\)"),
    ],
)
def test_bad_arguments_raise_one_clear_error(call, exc, match):
    with pytest.raises(exc, match=match):
        call()

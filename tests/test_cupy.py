"""The CuPy backend against NumPy: every conv engine, the pools, batch norm, gradients with a float64
NumPy reference, tl.function with captures on the device and no host reads; skipped without a GPU.

The tests that need no GPU check what a machine without one must see: a clear error.
"""

import importlib.util

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.backends import cupy_backend, cupy_nn

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def _gpu():
    try:
        tl.backends.get("cupy").asarray(np.zeros(1))
    except cupy_backend.CupyUnavailable as e:
        pytest.skip(str(e))
    return tl.backends.get("cupy")


def _close(got, want, dtype):
    tol = {np.float16: 2e-2, np.float32: 2e-4, np.float64: 1e-10}[np.dtype(dtype).type]
    assert got.backend.name == "cupy"
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=tol, atol=tol * max(1.0, np.abs(want.numpy()).max()))


# ---------------------------------------------------------------- without a GPU


def test_without_cuda_the_backend_says_what_is_missing():
    if importlib.util.find_spec("cupy") is not None:
        pytest.skip("CuPy is installed here")
    with pytest.raises(cupy_backend.CupyUnavailable, match="the 'cupy' backend needs CuPy with a CUDA device"):
        tl.tensor([1.0], backend="cupy")
    assert "cupy" in tl.backends.names() and isinstance(tl.tensor([1.0]).to("numpy"), tl.Tensor)


def test_conv_kernels_on_cupy_are_registered_and_explained():
    text = tl.ops.explain("Conv2D")
    assert "cupy: tensorlib.backends.cupy_nn.conv2d" in text
    for op_type in (
        "Conv2DBackpropInput",
        "Conv2DBackpropFilter",
        "MaxPool",
        "MaxPoolGrad",
        "MaxPoolGradGrad",
        "AvgPool",
        "AvgPoolGrad",
        "FusedBatchNormV3",
        "FusedBatchNormGradV3",
    ):
        assert "cupy" in tl.ops.get(op_type).kernels, op_type


def _numpy_one_style_module():
    """A stand-in for an older CuPy: NumPy-1 names only, sorts without ``stable=``."""
    import types

    hidden = {"acos", "asin", "atan", "acosh", "asinh", "atanh", "atan2", "cumulative_sum", "astype", "isdtype"}
    hidden |= {"matrix_transpose", "pow", "concat", "permute_dims", "sort", "argsort"}
    module = types.SimpleNamespace(**{n: getattr(np, n) for n in dir(np) if not n.startswith("_") and n not in hidden})
    module.sort = lambda a, axis=-1, kind=None: np.sort(a, axis=axis, kind="stable")
    module.argsort = lambda a, axis=-1, kind=None: np.argsort(a, axis=axis, kind="stable")
    return module


def test_generic_kernels_run_on_the_namespace_given_to_an_older_cupy():
    xp = cupy_backend._namespace(_numpy_one_style_module())
    x = np.array([[0.5, -0.25, 0.5], [0.1, 0.9, -0.7]])

    def run(op_type, *args, **attrs):
        return tl.ops.get(op_type).generic_kernel(xp, *args, **{**tl.ops.get(op_type).defaults, **attrs})

    np.testing.assert_array_equal(run("Sort", x, axis=1), np.sort(x, axis=1))
    np.testing.assert_array_equal(run("ArgSort", x, axis=1, stable=True), np.argsort(x, axis=1, kind="stable"))
    np.testing.assert_array_equal(run("Cumsum", x, axis=0, reverse=True), np.cumsum(x[::-1], axis=0)[::-1])
    np.testing.assert_array_equal(xp.cumulative_sum(x, axis=1, include_initial=True)[:, 0], [0.0, 0.0])
    for op_type, ref in (("Asin", np.arcsin), ("Atanh", np.arctanh), ("Acos", np.arccos)):
        np.testing.assert_array_equal(run(op_type, x), ref(x))
    np.testing.assert_array_equal(run("Atan2", x, x[::-1]), np.arctan2(x, x[::-1]))
    np.testing.assert_array_equal(run("MatrixDiagPart", x, offset=1), np.diagonal(x, 1))
    np.testing.assert_array_equal(xp.matrix_transpose(x), x.T)


# ---------------------------------------------------------------- on a GPU

CONVS = [
    ((2, 9, 8, 3), (3, 3, 3, 4), 1, "SAME", 1),
    ((2, 10, 9, 2), (3, 2, 2, 5), 2, "SAME", 1),
    ((1, 11, 11, 3), (3, 3, 3, 2), 1, "VALID", 2),
    ((2, 8, 8, 4), (2, 3, 4, 3), (2, 1), [[1, 2], [0, 1]], 1),
    ((3, 28, 28, 1), (5, 5, 1, 6), 1, "VALID", 1),
    ((4, 12, 12, 6), (5, 5, 6, 16), 1, "VALID", 1),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("x_shape, w_shape, strides, padding, dilations", CONVS)
def test_conv_family_matches_numpy(x_shape, w_shape, strides, padding, dilations, dtype):
    _gpu()
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal(x_shape).astype(dtype), rng.standard_normal(w_shape).astype(dtype)
    want = tl.nn.conv2d(x, w, strides, padding, dilations)
    got = tl.nn.conv2d(tl.tensor(x, backend="cupy"), tl.tensor(w, backend="cupy"), strides, padding, dilations)
    _close(got, want, dtype)
    dy = rng.standard_normal(want.shape).astype(dtype)
    _close(
        tl.nn.conv2d_backprop_input(
            x_shape, tl.tensor(w, backend="cupy"), tl.tensor(dy, backend="cupy"), strides, padding, dilations
        ),
        tl.nn.conv2d_backprop_input(x_shape, w, dy, strides, padding, dilations),
        dtype,
    )
    _close(
        tl.nn.conv2d_backprop_filter(
            tl.tensor(x, backend="cupy"), w_shape, tl.tensor(dy, backend="cupy"), strides, padding, dilations
        ),
        tl.nn.conv2d_backprop_filter(x, w_shape, dy, strides, padding, dilations),
        dtype,
    )


@pytest.mark.parametrize("x_shape, w_shape, strides, padding, dilations", CONVS[:4])
def test_gemm_fallback_matches_numpy_on_the_gpu(x_shape, w_shape, strides, padding, dilations):
    cp = _gpu().cupy
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal(x_shape), rng.standard_normal(w_shape)
    want = tl.nn.conv2d(x, w, strides, padding, dilations).numpy()
    from tensorlib.ops.nn import _common

    s = (strides, strides) if isinstance(strides, int) else tuple(strides)
    d = (dilations, dilations)
    pads = _common._geometry(
        x_shape[1:3], w_shape[:2], s, d, padding if isinstance(padding, str) else tuple(map(tuple, padding))
    )[1]
    got = cupy_nn.gemm_conv2d(cp, cp.asarray(x), cp.asarray(w), s, d, pads)
    np.testing.assert_allclose(cp.asnumpy(got), want, rtol=1e-10, atol=1e-10)


POOLS = [
    ((2, 6, 6, 3), 2, 2, "VALID"),
    ((2, 7, 5, 2), 3, 2, "SAME"),
    ((1, 8, 8, 4), (3, 2), (1, 2), "SAME"),
    ((3, 28, 28, 6), 2, 2, "VALID"),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("shape, ksize, strides, padding", POOLS)
def test_pools_and_their_gradients_match_numpy(shape, ksize, strides, padding, dtype):
    _gpu()
    rng = np.random.default_rng(2)
    x = rng.standard_normal(shape).astype(dtype)
    gx = tl.tensor(x, backend="cupy")
    for pool in (tl.nn.max_pool, tl.nn.avg_pool):
        want = pool(x, ksize, strides, padding)
        _close(pool(gx, ksize, strides, padding), want, dtype)
        u = rng.standard_normal(want.shape).astype(dtype)
        grad_want = tl.grad(lambda t: tl.sum(pool(t, ksize, strides, padding) * u))(tl.tensor(x))
        grad_got = tl.grad(lambda t: tl.sum(pool(t, ksize, strides, padding) * tl.tensor(u, backend="cupy")))(gx)
        _close(grad_got, grad_want, dtype)
    if dtype == np.float64:  # second order through MaxPoolGrad / MaxPoolGradGrad

        def f(t):
            return tl.sum(
                tl.square(tl.grad(lambda s: tl.sum(tl.square(tl.nn.max_pool(s, ksize, strides, padding))))(t))
            )

        _close(tl.grad(f)(gx), tl.grad(f)(tl.tensor(x)), dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("is_training", [True, False])
def test_fused_batch_norm_and_its_gradients_match_numpy(dtype, is_training):
    _gpu()
    rng = np.random.default_rng(3)
    args = [
        rng.standard_normal((4, 5, 3, 6)).astype(dtype),
        rng.standard_normal(6).astype(dtype),
        rng.standard_normal(6).astype(dtype),
        rng.standard_normal(6).astype(dtype),
        rng.uniform(0.5, 2.0, 6).astype(dtype),
    ]

    def loss(*ts):
        y, mean, var = tl.nn.fused_batch_norm(*ts, epsilon=1e-3, is_training=is_training)
        return tl.sum(y * y) + tl.sum(mean) + tl.sum(var)

    want = tl.value_and_grad(loss, argnums=(0, 1, 2))(*[tl.tensor(a) for a in args])
    got = tl.value_and_grad(loss, argnums=(0, 1, 2))(*[tl.tensor(a, backend="cupy") for a in args])
    _close(got[0], want[0], dtype)
    for g, w in zip(got[1], want[1]):
        _close(g, w, dtype)


def _numpy_checked_grads(f, arrays, order):
    """f's gradients on CuPy against NumPy's, after check_grads verified NumPy's in float64."""
    tl.testing.check_grads(f, arrays, order=order)
    argnums = tuple(range(len(arrays)))
    gpu = tl.grad(f, argnums=argnums)(*[tl.tensor(a, backend="cupy") for a in arrays])
    cpu = tl.grad(f, argnums=argnums)(*[tl.tensor(a) for a in arrays])
    for g, c in zip(gpu, cpu):
        _close(g, c, np.float64)


def test_gradients_on_cupy_match_the_float64_numpy_reference():
    _gpu()
    rng = np.random.default_rng(4)
    x, w = rng.standard_normal((2, 6, 6, 2)), rng.standard_normal((3, 3, 2, 3))
    _numpy_checked_grads(lambda x, w: tl.sum(tl.tanh(tl.nn.conv2d(x, w, 1, "SAME"))), [x, w], order=2)
    _numpy_checked_grads(lambda x: tl.sum(tl.nn.avg_pool(tl.sin(x), 2, 2, "VALID") ** 2), [x], order=2)
    logits, labels = rng.standard_normal((5, 4)), np.array([0, 3, 1, 2, 3])
    _numpy_checked_grads(
        lambda z: tl.sum(
            tl.nn.sparse_softmax_cross_entropy_with_logits(labels=tl.tensor(labels, backend=z.backend), logits=z)
        ),
        [logits],
        order=2,
    )


def test_tl_function_on_cupy_keeps_captures_on_the_device_and_never_reads_back(monkeypatch):
    backend = _gpu()
    rng = np.random.default_rng(5)
    w = tl.Variable(rng.standard_normal((5, 5, 1, 4)).astype(np.float32), backend="cupy")
    big = tl.tensor(rng.standard_normal((4, 10)).astype(np.float32), backend="cupy")

    @tl.function
    def step(x, labels):
        with tl.GradientTape() as tape:
            h = tl.nn.max_pool(tl.nn.relu(tl.nn.conv2d(x, w, 1, "VALID")), 2, 2, "VALID")
            logits = tl.reshape(h, (x.shape[0], -1))[:, :4] @ big
            loss = tl.mean(tl.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
        w.assign_sub(0.1 * tape.gradient(loss, w))
        return loss

    x = tl.tensor(rng.standard_normal((8, 12, 12, 1)).astype(np.float32), backend="cupy")
    labels = tl.tensor(rng.integers(0, 10, 8), backend="cupy")
    first = step(x, labels)
    graph = step.get_graph(x, labels)
    assert all(c.tensor.backend.name == "cupy" for c in graph.captures)

    def no_host_reads(*args, **kwargs):
        raise AssertionError("a graph run on CuPy read an array back to the host")

    monkeypatch.setattr(backend, "to_numpy", no_host_reads)
    monkeypatch.setattr(backend.cupy, "asnumpy", no_host_reads)
    import cupyx

    with cupyx.allow_synchronize(False):  # any implicit device synchronisation raises
        second = step(x, labels)
    monkeypatch.undo()
    assert second.backend.name == "cupy" and float(second) < float(first)


def test_to_moves_between_backends_and_random_draws_follow_the_seed():
    _gpu()
    x = tl.tensor(np.arange(6.0).reshape(2, 3))
    g = x.to("cupy")
    assert g.backend.name == "cupy" and g.to("numpy").backend.name == "numpy"
    np.testing.assert_array_equal(g.to("numpy").numpy(), x.numpy())
    with tl.backend("cupy"):
        tl.random.seed(7)
        a = tl.random.normal((3,))
        tl.random.seed(7)
        b = tl.random.normal((3,))
    assert a.backend.name == "cupy"
    np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_random_draws_and_dropout_run_on_the_device_with_cupys_generator(monkeypatch):
    backend = _gpu()
    import cupy

    def no_host(*args, **kwargs):
        raise AssertionError("a random draw went through the host")

    monkeypatch.setattr(backend, "asarray", no_host)  # a host draw would be converted with asarray
    tl.random.seed(3)
    x = tl.random.normal((20000,), 1.0, 2.0, backend="cupy")
    u = tl.random.uniform((20000,), -1.0, 1.0, dtype="float64", backend="cupy")
    k = tl.random.uniform((1000,), 0, 5, dtype="int64", backend="cupy")
    t = tl.random.truncated_normal((20000,), backend="cupy")
    y = tl.nn.dropout(x, 0.5, seed=4)
    with tl.backend("cupy"):
        w = tl.initializers.he_normal((64, 32), seed=5)
    monkeypatch.undo()
    for a in (x, u, k, t, y, w):
        assert isinstance(a._value, cupy.ndarray)
    assert abs(float(x.numpy().mean()) - 1.0) < 0.1 and abs(float(x.numpy().std()) - 2.0) < 0.1
    assert -1.0 <= u.numpy().min() and u.numpy().max() < 1.0 and set(k.numpy().tolist()) == {0, 1, 2, 3, 4}
    assert np.abs(t.numpy()).max() <= 2.0
    assert 0.45 < float((y.numpy() == 0).mean()) < 0.55
    tl.random.seed(3)
    np.testing.assert_array_equal(tl.random.normal((20000,), 1.0, 2.0, backend="cupy").numpy(), x.numpy())
    assert type(tl.random.Generator(0)._stream(backend)).__module__.startswith("cupy")

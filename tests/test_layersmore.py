"""Keras' and torch.nn.init's initializers and the layers tl.nn had lacked (Reshape, Permute, the merge layers,
Normalization, the noise layers, PixelShuffle, ...), attacked with the inputs a Keras / PyTorch user gives them.

References: NumPy formulas written here (the moments of each initializer's distribution, on samples large
enough that a wrong constant fails: Keras' truncated-normal correction 0.8796, a uniform's sqrt(3)), the fans of
1-D, 2-D, 3-D and 5-D shapes counted by hand, float64 central differences (``check_grads``), and, where
installed, torch.nn.init / torch.nn and Keras 3 with the weights copied across.
"""

import functools
import math

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.testing import check_grads

RNG = np.random.default_rng(20261202)
init = tl.initializers

# The deviation of a standard normal truncated to [-2, 2]: sqrt(1 - 4 phi(2) / (2 Phi(2) - 1)), by hand.
_PHI2 = math.exp(-2.0) / math.sqrt(2 * math.pi)
_TRUNC = math.sqrt(1 - 4 * _PHI2 / math.erf(2 / math.sqrt(2)))


# ------------------------------------------------------------------ initializers
# (shape, fan_in, fan_out): a vector, a matrix, and Conv1D/2D/3D filters (width, in, out) ... (d, h, w, in, out).
FANS = [
    ((20_000,), 20_000, 20_000),
    ((300, 500), 300, 500),
    ((5, 60, 80), 300, 400),
    ((3, 4, 60, 100), 720, 1200),
    ((2, 3, 4, 50, 60), 1200, 1440),
]


def test_truncated_normal_constant_is_keras_and_the_formula():
    assert abs(_TRUNC - 0.87962566103423978) < 1e-12


@pytest.mark.parametrize("shape,fan_in,fan_out", FANS)
@pytest.mark.parametrize("mode", ["fan_in", "fan_out", "fan_avg"])
@pytest.mark.parametrize("distribution", ["truncated_normal", "untruncated_normal", "uniform"])
def test_variance_scaling_moments_and_bounds(shape, fan_in, fan_out, mode, distribution):
    fan = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2}[mode]
    variance = 1.7 / fan
    draws = [
        init.variance_scaling(shape, seed=s, dtype=tl.float64, scale=1.7, mode=mode, distribution=distribution)
        for s in range(max(1, 200_000 // math.prod(shape)))
    ]
    assert draws[0].shape == shape and draws[0].dtype == tl.float64
    w = np.concatenate([d.numpy().ravel() for d in draws])
    # sample variance's relative error ~ sqrt(2 / n) < 0.4 %; a missing 0.8796 correction is off by 23 %
    np.testing.assert_allclose(w.var(), variance, rtol=0.025)
    assert abs(w.mean()) < 5 * math.sqrt(variance / w.size)
    if distribution == "uniform":
        limit = math.sqrt(3 * variance)
        assert np.abs(w).max() <= limit and np.abs(w).max() > 0.99 * limit
    elif distribution == "truncated_normal":
        limit = 2 * math.sqrt(variance) / _TRUNC
        assert np.abs(w).max() <= limit and np.abs(w).max() > 0.99 * limit
    else:
        assert np.abs(w).max() > 3 * math.sqrt(variance)  # not truncated


@pytest.mark.parametrize(
    "name,variance,distribution",
    [
        ("lecun_uniform", lambda fi, fo: 1 / fi, "uniform"),
        ("lecun_normal", lambda fi, fo: 1 / fi, "truncated_normal"),
        ("glorot_uniform", lambda fi, fo: 2 / (fi + fo), "uniform"),
        ("he_uniform", lambda fi, fo: 2 / fi, "uniform"),
        ("kaiming_uniform", lambda fi, fo: 2 / fi, "uniform"),
        ("kaiming_normal", lambda fi, fo: 2 / fi, "untruncated_normal"),
    ],
)
@pytest.mark.parametrize("shape,fan_in,fan_out", FANS[1:])
def test_named_variance_scalings(name, variance, distribution, shape, fan_in, fan_out):
    fn = init.get(name)
    w = np.concatenate(
        [fn(shape, seed=s, dtype="float64").numpy().ravel() for s in range(max(1, 100_000 // math.prod(shape)))]
    )
    want = variance(fan_in, fan_out)
    np.testing.assert_allclose(w.var(), want, rtol=0.03)
    if distribution == "uniform":
        assert np.abs(w).max() <= math.sqrt(3 * want)
    if distribution == "truncated_normal":
        assert np.abs(w).max() <= 2 * math.sqrt(want) / _TRUNC


@pytest.mark.parametrize(
    "nonlinearity,param,gain",
    [
        ("linear", None, 1.0),
        ("conv3d", None, 1.0),
        ("sigmoid", None, 1.0),
        ("tanh", None, 5 / 3),
        ("relu", None, math.sqrt(2)),
        ("leaky_relu", None, math.sqrt(2 / (1 + 0.01**2))),
        ("leaky_relu", 0.2, math.sqrt(2 / 1.04)),
        ("leaky_relu", math.sqrt(5), math.sqrt(1 / 3)),
        ("selu", None, 0.75),
    ],
)
def test_calculate_gain(nonlinearity, param, gain):
    assert init.calculate_gain(nonlinearity, param) == pytest.approx(gain, rel=1e-12)


@pytest.mark.parametrize("mode,fan", [("fan_in", 72), ("fan_out", 120)])
@pytest.mark.parametrize("nonlinearity,a", [("leaky_relu", math.sqrt(5)), ("relu", 0.0), ("tanh", 0.0)])
def test_kaiming_with_a_mode_and_nonlinearity(mode, fan, nonlinearity, a):
    shape = (3, 4, 6, 10)
    gain = init.calculate_gain(nonlinearity, a)
    u = np.concatenate(
        [
            init.kaiming_uniform(shape, seed=s, dtype="float64", a=a, mode=mode, nonlinearity=nonlinearity).numpy()
            for s in range(30)
        ]
    )
    bound = gain * math.sqrt(3 / fan)
    assert np.abs(u).max() <= bound and np.abs(u).max() > 0.999 * bound
    np.testing.assert_allclose(u.var(), bound**2 / 3, rtol=0.03)
    n = np.concatenate(
        [
            init.kaiming_normal(shape, seed=s, dtype="float64", a=a, mode=mode, nonlinearity=nonlinearity).numpy()
            for s in range(30)
        ]
    )
    np.testing.assert_allclose(n.std(), gain / math.sqrt(fan), rtol=0.015)


def test_kaiming_and_gain_match_torch():
    torch = pytest.importorskip("torch")
    for name in ("linear", "sigmoid", "tanh", "relu", "selu", "conv2d"):
        assert init.calculate_gain(name) == pytest.approx(torch.nn.init.calculate_gain(name))
    assert init.calculate_gain("leaky_relu", 0.3) == pytest.approx(torch.nn.init.calculate_gain("leaky_relu", 0.3))
    # torch's (out, in, kh, kw) conv weight is tl's (kh, kw, in, out): the same fans, so the same bound.
    t = torch.empty(10, 6, 3, 4, dtype=torch.float64)
    for mode in ("fan_in", "fan_out"):
        torch.nn.init.kaiming_uniform_(t, a=0.5, mode=mode)
        ours = init.kaiming_uniform((3, 4, 6, 10), seed=0, dtype="float64", a=0.5, mode=mode).numpy()
        np.testing.assert_allclose(np.abs(ours).max(), t.abs().max().item(), rtol=0.01)


def test_variance_scaling_matches_keras_statistics():
    keras = pytest.importorskip("keras")
    shape = (3, 3, 64, 96)
    for mode in ("fan_in", "fan_out", "fan_avg"):
        for distribution in ("truncated_normal", "untruncated_normal", "uniform"):
            ours = init.variance_scaling(shape, 0, "float64", 2.0, mode, distribution).numpy()
            theirs = np.asarray(keras.initializers.VarianceScaling(2.0, mode, distribution, seed=1)(shape, "float64"))
            np.testing.assert_allclose(ours.std(), theirs.std(), rtol=0.02)
            if distribution != "untruncated_normal":  # the same bound
                np.testing.assert_allclose(np.abs(ours).max(), np.abs(theirs).max(), rtol=0.01)


@pytest.mark.parametrize(
    "name,kwargs,mean,std,bounds",
    [
        ("random_normal", {}, 0.0, 0.05, None),
        ("random_normal", {"mean": 1.5, "stddev": 0.3}, 1.5, 0.3, None),
        ("random_uniform", {}, 0.0, 0.1 / math.sqrt(12), (-0.05, 0.05)),
        ("random_uniform", {"minval": 2.0, "maxval": 5.0}, 3.5, 3 / math.sqrt(12), (2.0, 5.0)),
        ("truncated_normal", {}, 0.0, 0.05 * _TRUNC, (-0.1, 0.1)),
        ("truncated_normal", {"mean": -1.0, "stddev": 2.0}, -1.0, 2.0 * _TRUNC, (-5.0, 3.0)),
    ],
)
def test_random_initializers_moments(name, kwargs, mean, std, bounds):
    w = getattr(init, name)((400, 250), seed=3, dtype="float64", **kwargs).numpy()
    np.testing.assert_allclose(w.mean(), mean, atol=5 * std / math.sqrt(w.size))
    np.testing.assert_allclose(w.std(), std, rtol=0.01)
    if bounds:
        assert bounds[0] <= w.min() and w.max() <= bounds[1]
        assert w.min() < bounds[0] + 0.01 * (bounds[1] - bounds[0]) and w.max() > bounds[1] - 0.01 * (
            bounds[1] - bounds[0]
        )


def test_seeds_dtypes_and_the_global_stream():
    for name in ("lecun_normal", "variance_scaling", "kaiming_normal", "random_uniform", "truncated_normal"):
        fn = init.get(name)
        a, b, c = fn((5, 4), seed=7), fn((5, 4), seed=7), fn((5, 4), seed=8)
        assert a.dtype == tl.float32 and np.array_equal(a.numpy(), b.numpy())
        assert not np.array_equal(a.numpy(), c.numpy())
        tl.random.seed(11)
        d = fn((5, 4))
        tl.random.seed(11)
        assert np.array_equal(d.numpy(), fn((5, 4)).numpy())
        assert fn((3,), seed=0, dtype=tl.float16).dtype == tl.float16
        with pytest.raises(TypeError, match=rf"initializers.{name}: random weights need a float dtype"):
            fn((2, 2), seed=0, dtype=tl.int32)


def test_orthogonal_gain_non_square_and_conv_shapes():
    for shape in ((6, 3), (3, 6), (3, 3, 4, 8), (3, 3, 2, 32), (2, 2, 2, 3, 5)):
        q = init.orthogonal(shape, seed=2, dtype="float64", gain=1.5).numpy().reshape(-1, shape[-1])
        rows, cols = q.shape
        gram = q.T @ q if rows >= cols else q @ q.T
        np.testing.assert_allclose(gram, 2.25 * np.eye(min(rows, cols)), atol=1e-12)
    # Haar-distributed: E[q_ij^2] = 1/n for a square q, and the first column's sign is not fixed by QR's.
    qs = np.stack([init.orthogonal((4, 4), seed=s, dtype="float64").numpy() for s in range(400)])
    np.testing.assert_allclose((qs**2).mean(0), np.full((4, 4), 0.25), atol=0.04)
    assert abs(np.sign(qs[:, 0, 0]).mean()) < 0.2


def test_identity_constant_and_eye():
    np.testing.assert_array_equal(init.identity((3, 5), gain=0.5).numpy(), 0.5 * np.eye(3, 5))
    np.testing.assert_array_equal(init.eye((4, 2), dtype="float64").numpy(), np.eye(4, 2))
    # A conv filter (HWIO) with a centre tap from channel i to i: a SAME convolution passes its input through.
    x = RNG.normal(size=(2, 5, 6, 3)).astype(np.float32)
    for k in ((3, 3), (4, 2), (1, 5)):
        w = init.identity((*k, 3, 4))
        y = tl.nn.conv2d(x, w, 1, "SAME").numpy() if k[0] % 2 and k[1] % 2 else None
        if y is not None:
            np.testing.assert_array_equal(y[..., :3], x)
            np.testing.assert_array_equal(y[..., 3], 0)
        want = np.zeros((*k, 3, 4))
        for i in range(3):
            want[k[0] // 2, k[1] // 2, i, i] = 1
        np.testing.assert_array_equal(w.numpy(), want)
    np.testing.assert_array_equal(init.identity((3, 2, 2)).numpy()[1], np.eye(2))
    assert init.identity((0, 3, 3)).shape == (0, 3, 3)
    with pytest.raises(ValueError, match=r"initializers.identity: needs a matrix or a convolution filter, got"):
        init.identity((3,))
    np.testing.assert_array_equal(init.constant((2, 3), value=2.5).numpy(), np.full((2, 3), 2.5, np.float32))
    np.testing.assert_array_equal(init.constant((2, 3), value=[1, 2, 3], dtype="int32").numpy(), [[1, 2, 3]] * 2)
    with pytest.raises(ValueError, match=r"initializers.constant: value of shape \(2,\) does not broadcast"):
        init.constant((2, 3), value=[1.0, 2.0])
    with pytest.raises(TypeError, match="initializers.constant: value must be a number"):
        init.constant((2,), value="a")


def test_identity_and_orthogonal_match_torch():
    torch = pytest.importorskip("torch")
    t = torch.empty(4, 3, 3, 5)  # (out, in, kh, kw)
    torch.nn.init.dirac_(t)
    np.testing.assert_array_equal(init.identity((3, 5, 3, 4)).numpy(), t.permute(2, 3, 1, 0).numpy())
    e = torch.empty(3, 5)
    torch.nn.init.eye_(e)
    np.testing.assert_array_equal(init.eye((3, 5)).numpy(), e.numpy())


def test_get_each_name_and_errors():
    for name in init.__all__:
        if name not in ("get", "calculate_gain", "eye"):
            assert init.get(name) is getattr(init, name)
    for alias, fn in [
        ("VarianceScaling", init.variance_scaling),
        ("LecunUniform", init.lecun_uniform),
        ("TruncatedNormal", init.truncated_normal),
        ("RandomNormal", init.random_normal),
        ("GlorotUniform", init.glorot_uniform),
        ("xavier_normal", init.glorot_normal),
        ("kaiming_uniform", init.kaiming_uniform),
        ("eye", init.identity),
        ("Identity", init.identity),
        ("Constant", init.constant),
    ]:
        assert init.get(alias) is fn
    assert init.get(init.he_normal) is init.he_normal
    for bad in ("glorot", 3, None):
        with pytest.raises(ValueError, match=f"initializers: unknown initializer {bad!r}; choose one of"):
            init.get(bad)
    cases = [
        (lambda: init.variance_scaling((2, 2), scale=0.0), "variance_scaling: scale must be a finite number > 0"),
        (lambda: init.variance_scaling((2, 2), scale="1"), "variance_scaling: scale must be a finite number > 0"),
        (lambda: init.variance_scaling((2, 2), mode="fan"), "variance_scaling: mode must be one of 'fan_in'"),
        (lambda: init.variance_scaling((2, 2), distribution="normal"), "distribution must be one of"),
        (lambda: init.kaiming_normal((2, 2), mode="fan_avg"), "kaiming_normal: mode must be one of 'fan_in', 'fan_o"),
        (lambda: init.kaiming_uniform((2, 2), nonlinearity="gelu"), "calculate_gain: nonlinearity must be one of"),
        (lambda: init.kaiming_uniform((2, 2), a=None), "kaiming_uniform: a must be a finite number, got None"),
        (lambda: init.random_uniform((2,), minval=1.0, maxval=0.0), "minval must not exceed maxval"),
        (lambda: init.random_normal((2,), stddev=float("nan")), "random_normal: stddev must be a finite number"),
        (lambda: init.calculate_gain("leaky_relu", "0.1"), "calculate_gain: the leaky_relu slope"),
    ]
    for call, message in cases:
        with pytest.raises(ValueError, match=message):
            call()


def test_initializers_in_layers():
    layer = tl.nn.Dense(64, 32, kernel_initializer="lecun_uniform", bias_initializer="ones", seed=0)
    assert np.abs(layer.kernel.numpy()).max() <= math.sqrt(3 / 64) and layer.bias.numpy().tolist() == [1.0] * 32
    layer = tl.nn.Dense(5, 5, kernel_initializer=functools.partial(init.identity, gain=2.0))
    np.testing.assert_array_equal(layer.kernel.numpy(), 2 * np.eye(5))


# ------------------------------------------------------------------ layers: shapes
def _x(*shape, dtype=np.float32):
    return RNG.normal(size=shape).astype(dtype)


def test_reshape_permute_repeat_unflatten_against_numpy():
    x = _x(3, 4, 6)
    np.testing.assert_array_equal(tl.nn.Reshape((2, -1))(x).numpy(), x.reshape(3, 2, 12))
    np.testing.assert_array_equal(tl.nn.Reshape((24,))(x).numpy(), x.reshape(3, 24))
    np.testing.assert_array_equal(tl.nn.Reshape((-1, 2, 3))(x).numpy(), x.reshape(3, 4, 2, 3))
    np.testing.assert_array_equal(tl.nn.Permute((2, 1))(x).numpy(), x.transpose(0, 2, 1))
    y = _x(2, 3, 4, 5)
    np.testing.assert_array_equal(tl.nn.Permute((3, 1, 2))(y).numpy(), y.transpose(0, 3, 1, 2))
    v = _x(3, 5)
    np.testing.assert_array_equal(tl.nn.RepeatVector(4)(v).numpy(), np.repeat(v[:, None], 4, axis=1))
    np.testing.assert_array_equal(tl.nn.Unflatten(2, (2, -1))(y).numpy(), y.reshape(2, 3, 2, 2, 5))
    np.testing.assert_array_equal(tl.nn.Unflatten(-1, (5, 1))(y).numpy(), y[..., None])
    # empty batches
    assert tl.nn.Reshape((2, -1))(np.zeros((0, 4, 6), np.float32)).shape == (0, 2, 12)
    assert tl.nn.Permute((2, 1))(np.zeros((0, 4, 6))).shape == (0, 6, 4)
    assert tl.nn.RepeatVector(2)(np.zeros((0, 3))).shape == (0, 2, 3)
    assert tl.nn.Reshape((-1, 2))(np.zeros((2, 0, 3))).shape == (2, 0, 2)
    with pytest.raises(ValueError, match=r"Reshape: -1 in \(2, 0, -1\) is ambiguous beside a 0"):
        tl.nn.Reshape((0, -1))(np.zeros((2, 0, 3)))


def test_shape_layers_errors_name_the_layer_shapes_and_dtypes():
    cases = [
        (
            lambda: tl.nn.Reshape((5, -1))(np.ones((2, 12), np.float32)),
            r"Reshape: cannot reshape input of shape \(2, 12\) \(float32\) to \(2, 5, -1\)",
        ),
        (
            lambda: tl.nn.Reshape((5, 3))(np.ones((2, 12))),
            r"Reshape: cannot reshape input of shape \(2, 12\) \(float64\) to \(2, 5, 3\)",
        ),
        (
            lambda: tl.nn.Reshape((-1, -1)),
            r"Reshape: target_shape must be a tuple of non-negative ints with at most one -1",
        ),
        (lambda: tl.nn.Reshape("ab"), r"Reshape: target_shape must be"),
        (lambda: tl.nn.Permute((1, 3)), r"Permute: dims must be a permutation of 1, 2, ..., n"),
        (lambda: tl.nn.Permute((0, 1)), r"Permute: dims must be a permutation"),
        (lambda: tl.nn.Permute((2, 1))(np.ones((2, 3))), r"Permute: input must be 3-D, got shape \(2, 3\) \(float64\)"),
        (lambda: tl.nn.RepeatVector(0), r"RepeatVector: n must be a positive integer, got 0"),
        (lambda: tl.nn.RepeatVector(2)(np.ones((2, 3, 4))), r"RepeatVector: input must be 2-D, got shape \(2, 3, 4\)"),
        (
            lambda: tl.nn.Unflatten(1, (4, -1))(np.ones((2, 6))),
            r"Unflatten: dimension 1 of size 6 cannot be unflattened to \(4, -1\)",
        ),
        (
            lambda: tl.nn.Unflatten(2, (4, -1))(np.ones((2, 6))),
            r"Unflatten: dim 2 is out of range for input of shape \(2, 6\)",
        ),
        (lambda: tl.nn.Reshape((2,))(np.float32(3.0)), r"Reshape: input must be at least 1-D"),
    ]
    for call, message in cases:
        with pytest.raises(ValueError, match=message):
            call()


def test_reshape_and_permute_traced_with_an_unknown_batch():
    spec = tl.TensorSpec((None, 4, 6), tl.float32)
    for layer, ref in [
        (tl.nn.Reshape((2, -1)), lambda a: a.reshape(len(a), 2, 12)),
        (tl.nn.Permute((2, 1)), lambda a: a.transpose(0, 2, 1)),
        (tl.nn.Unflatten(2, (3, 2)), lambda a: a.reshape(len(a), 4, 3, 2)),
        (tl.nn.TimeDistributed(tl.nn.Dense(6, 2, seed=0)), None),
    ]:
        f = tl.function(layer)
        f.get_graph(spec)
        for n in (1, 3):
            x = _x(n, 4, 6)
            want = layer(x).numpy() if ref is None else ref(x)
            np.testing.assert_allclose(f(x).numpy(), want, rtol=1e-6)


def test_reshape_traced_with_sizes_known_only_at_run_time():
    # TensorSpec((None, None)) with Reshape((3, 4)) raised "traced with unknown sizes": the target needs no -1
    x = _x(2, 12)
    for spec, target in [((None, None), (3, 4)), ((2, None), (3, -1)), ((None, 12), (-1, 6))]:
        f = tl.function(tl.nn.Reshape(target))
        f.get_graph(tl.TensorSpec(spec, tl.float32))
        np.testing.assert_array_equal(f(x).numpy(), x.reshape(2, *target))
    f = tl.function(tl.nn.Reshape((-1, 4)))
    with pytest.raises(ValueError, match=r"Reshape: traced with the batch size and other sizes unknown, cannot work"):
        f.get_graph(tl.TensorSpec((None, None), tl.float32))


# ------------------------------------------------------------------ merge layers
MERGES = [
    ("Add", lambda xs: sum(xs)),
    ("Subtract", lambda xs: xs[0] - xs[1]),
    ("Multiply", lambda xs: functools.reduce(np.multiply, xs)),
    ("Average", lambda xs: sum(xs) / len(xs)),
    ("Maximum", lambda xs: functools.reduce(np.maximum, xs)),
    ("Minimum", lambda xs: functools.reduce(np.minimum, xs)),
]


@pytest.mark.parametrize("name,ref", MERGES)
def test_merge_layers_values_broadcasting_and_gradients(name, ref):
    count = 2 if name == "Subtract" else 3
    shapes = [(4, 3), (1, 3), (4, 1)][:count]
    xs = [RNG.normal(size=s) for s in shapes]
    layer = getattr(tl.nn, name)()
    np.testing.assert_allclose(layer(xs).numpy(), ref(xs), rtol=1e-12)
    check_grads(lambda *a: layer(list(a)), xs, order=2)
    traced = tl.function(lambda *a: layer(list(a)))
    np.testing.assert_allclose(traced(*xs).numpy(), ref(xs), rtol=1e-12)
    x32 = [x.astype(np.float32) for x in xs]
    assert layer(x32).dtype == tl.float32
    assert layer([np.zeros((0, 3)), np.zeros((1, 3))][:count]).shape == (0, 3) or count != 2


def test_maximum_and_minimum_share_ties_equally():
    # A chain of pairwise maxima gave 1/2 to the last tied input and 1/4 to the others; torch.stack(...).amax and
    # jnp.max over the stacked inputs give each of three tied inputs 1/3 (ties split, DESIGN.md).
    a = tl.tensor([1.0, 2.0])
    for layer in (tl.nn.Maximum(), tl.nn.Minimum()):
        grads = tl.grad(lambda x, y, z, layer=layer: layer([x, y, z]).sum(), argnums=(0, 1, 2))(a, a, a)
        for g in grads:
            np.testing.assert_allclose(g.numpy(), [1 / 3, 1 / 3])


def test_merge_layers_errors():
    with pytest.raises(
        ValueError,
        match=r"Add: the inputs' shapes do not broadcast together, got \(2, 3\) \(float32\), \(2, 4\) \(float32\)",
    ):
        tl.nn.Add()([np.ones((2, 3), np.float32), np.ones((2, 4), np.float32)])
    with pytest.raises(ValueError, match="Add: needs at least 2 inputs, got 1"):
        tl.nn.Add()([np.ones(2)])
    with pytest.raises(ValueError, match="Subtract: needs exactly 2 inputs, got 3"):
        tl.nn.Subtract()([np.ones(2)] * 3)
    with pytest.raises(TypeError, match="Multiply: call it with a list of tensors, got a Tensor"):
        tl.nn.Multiply()(tl.ones((2,)))


def test_concatenate_against_numpy_and_errors():
    a, b = _x(2, 3, 4), _x(2, 5, 4)
    np.testing.assert_array_equal(tl.nn.Concatenate(axis=1)([a, b]).numpy(), np.concatenate([a, b], 1))
    np.testing.assert_array_equal(tl.nn.Concatenate(axis=-2)([a, b]).numpy(), np.concatenate([a, b], 1))
    check_grads(lambda x, y: tl.nn.Concatenate(1)([x, y]), [a.astype(np.float64), b.astype(np.float64)])
    with pytest.raises(
        ValueError,
        match=r"Concatenate: the inputs' sizes must agree but on axis -1, got \(2, 3, 4\) \(float32\), \(2, 5, 4\)",
    ):
        tl.nn.Concatenate()([a, b])
    with pytest.raises(ValueError, match="Concatenate: inputs must have one rank with axis 3 in it"):
        tl.nn.Concatenate(3)([a, b])


def _batch_dot(x, y, ax, ay, normalize):
    """Keras' batch_dot, per example with NumPy."""
    if normalize:
        x = x / np.maximum(np.sqrt((x**2).sum(ax, keepdims=True)), 1e-6)
        y = y / np.maximum(np.sqrt((y**2).sum(ay, keepdims=True)), 1e-6)
    out = np.stack([np.tensordot(x[i], y[i], axes=(ax - 1, ay - 1)) for i in range(len(x))])
    return out[:, None] if out.ndim == 1 else out


@pytest.mark.parametrize(
    "xs,ys,axes",
    [
        ((4, 5), (4, 5), 1),
        ((4, 3, 5), (4, 6, 5), 2),
        ((4, 3, 5), (4, 3, 6), 1),
        ((4, 3, 5), (4, 5, 2), (2, 1)),
        ((4, 2, 3, 5), (4, 5), (-1, -1)),
    ],
)
@pytest.mark.parametrize("normalize", [False, True])
def test_dot_against_numpy_and_gradients(xs, ys, axes, normalize):
    x, y = RNG.normal(size=xs), RNG.normal(size=ys)
    pair = (axes, axes) if isinstance(axes, int) else axes
    ax, ay = (a % len(s) for a, s in zip(pair, (xs, ys)))
    layer = tl.nn.Dot(axes, normalize=normalize)
    np.testing.assert_allclose(layer([x, y]).numpy(), _batch_dot(x, y, ax, ay, normalize), rtol=1e-10)
    check_grads(lambda a, b: layer([a, b]), [x, y])


def test_dot_matches_keras():
    keras = pytest.importorskip("keras")
    x, y = _x(4, 3, 5), _x(4, 6, 5)
    for normalize in (False, True):
        want = np.asarray(keras.layers.Dot(axes=2, normalize=normalize)([x, y]))
        np.testing.assert_allclose(tl.nn.Dot(2, normalize)([x, y]).numpy(), want, rtol=1e-5, atol=1e-6)
    a, b = _x(4, 5), _x(4, 5)
    np.testing.assert_allclose(tl.nn.Dot(1)([a, b]).numpy(), np.asarray(keras.layers.Dot(axes=1)([a, b])), rtol=1e-5)


def test_dot_errors():
    with pytest.raises(ValueError, match=r"Dot: axes \(0, 0\) must name a non-batch axis of each input"):
        tl.nn.Dot(0)([np.ones((2, 3)), np.ones((2, 3))])
    with pytest.raises(
        ValueError,
        match=r"Dot: the batch sizes and the sizes along axes \(1, 1\) must agree, got \(2, 3\) \(float64\) and \(2, 4\)",
    ):
        tl.nn.Dot(1)([np.ones((2, 3)), np.ones((2, 4))])
    with pytest.raises(ValueError, match="Dot: axes must be an int or a pair of ints"):
        tl.nn.Dot((1, 2, 3))


# ------------------------------------------------------------------ TimeDistributed, Identity, Lambda
def test_time_distributed_shares_the_layer_and_its_variables():
    dense = tl.nn.Dense(4, 3, seed=1)
    td = tl.nn.TimeDistributed(dense)
    x = _x(2, 5, 4).astype(np.float64)
    want = x @ dense.kernel.numpy().astype(np.float64) + dense.bias.numpy()
    np.testing.assert_allclose(td(x).numpy(), want, rtol=1e-6)
    assert list(td.trainable_variables) == ["layer"] and sorted(td.trainable_variables["layer"]) == ["bias", "kernel"]
    td.trainable = False
    assert td.trainable_variables == {}
    td.trainable = True
    state = td.state_dict()
    assert sorted(state) == ["layer.bias", "layer.kernel"]
    other = tl.nn.TimeDistributed(tl.nn.Dense(4, 3, seed=2))
    other.load_state_dict(state)
    np.testing.assert_array_equal(other(x).numpy(), td(x).numpy())
    conv = tl.nn.TimeDistributed(tl.nn.Conv2D(2, 3, 3, padding="SAME", seed=0))
    frames = _x(2, 4, 5, 5, 2)
    y = conv(frames).numpy()
    for t in range(4):
        np.testing.assert_allclose(y[:, t], conv.layer(frames[:, t]).numpy(), rtol=1e-5, atol=1e-6)
    with pytest.raises(
        ValueError, match=r"TimeDistributed: input must be at least 3-D \(batch, time, ...\), got shape \(2, 4\)"
    ):
        td(np.ones((2, 4)))


def test_identity_and_lambda():
    v = tl.Variable([1.0, 2.0])
    y = tl.nn.Identity()(v)
    v.assign([5.0, 6.0])
    assert y.numpy().tolist() == [1.0, 2.0]  # a value, not the Variable
    w = tl.Variable([3.0])
    held = tl.nn.Lambda(lambda x: w)(np.array([1.0]))
    w.assign([4.0])
    assert held.numpy().tolist() == [3.0]  # a value: the Variable's later assign does not reach it
    lam = tl.nn.Lambda(lambda x, y: x * y)
    np.testing.assert_array_equal(lam(np.array([2.0]), np.array([3.0])).numpy(), [6.0])
    check_grads(lambda x: tl.nn.Lambda(tl.sin)(x), [RNG.normal(size=(3,))])
    with pytest.raises(TypeError, match="Lambda: function must be a function of Tensors"):
        tl.nn.Lambda(3)
    with pytest.raises(TypeError, match="Lambda: arguments must be a dict"):
        tl.nn.Lambda(tl.sin, arguments=[1])


# ------------------------------------------------------------------ preprocessing and normalization layers
def test_rescaling_and_center_crop():
    img = RNG.integers(0, 256, size=(2, 5, 6, 3)).astype(np.uint8)
    y = tl.nn.Rescaling(1 / 255)(img)
    assert y.dtype == tl.float32
    np.testing.assert_allclose(y.numpy(), img / 255, rtol=1e-6)
    per_channel = tl.nn.Rescaling([1.0, 2.0, 3.0], offset=[0.0, -1.0, 1.0])(img.astype(np.float64))
    assert per_channel.dtype == tl.float64
    np.testing.assert_allclose(per_channel.numpy(), img * [1, 2, 3] + [0, -1, 1])
    check_grads(lambda x: tl.nn.Rescaling(0.5, 2.0)(x), [RNG.normal(size=(2, 3))])
    with pytest.raises(ValueError, match=r"Rescaling: scale \(2,\) and offset \(\) do not broadcast to the input"):
        tl.nn.Rescaling([1.0, 2.0])(img)
    x = _x(2, 7, 6, 3)
    np.testing.assert_array_equal(tl.nn.CenterCrop(3, 4)(x).numpy(), x[:, 2:5, 1:5])
    np.testing.assert_array_equal(tl.nn.CenterCrop(4, 3)(x).numpy(), x[:, 1:5, 1:4])
    np.testing.assert_array_equal(tl.nn.CenterCrop(4, 3)(x[0]).numpy(), x[0, 1:5, 1:4])
    np.testing.assert_array_equal(
        tl.nn.CenterCrop(4, 3, data_format="NCHW")(x.transpose(0, 3, 1, 2)).numpy(),
        x[:, 1:5, 1:4].transpose(0, 3, 1, 2),
    )
    # smaller than the window: Keras' smart_resize, the central crop of the window's aspect ratio (7 x 2 of 7 x 6
    # for 8 x 3, 6 x 6 for 9 x 9) resized
    np.testing.assert_allclose(tl.nn.CenterCrop(8, 3)(x).numpy(), _np_resize(x[:, :, 2:4], 8, 3), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(tl.nn.CenterCrop(9, 9)(x).numpy(), _np_resize(x[:, :6, :6], 9, 9), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(
        tl.nn.CenterCrop(8, 3, data_format="NCHW")(x.transpose(0, 3, 1, 2)).numpy(),
        _np_resize(x[:, :, 2:4], 8, 3).transpose(0, 3, 1, 2),
        rtol=1e-5,
        atol=1e-6,
    )
    with pytest.raises(
        ValueError, match=r"CenterCrop: input must be 4-D NHWC or one 3-D image, got \(7, 6\) \(float32\)"
    ):
        tl.nn.CenterCrop(8, 3)(x[0, ..., 0])


def _np_resize(images, height, width):
    """TensorFlow 2's bilinear resize (half-pixel centers, no antialiasing) of NHWC images, by its definition."""
    out = images.astype(np.float64)
    for axis, size in ((1, height), (2, width)):
        n = out.shape[axis]
        src = (np.arange(size) + 0.5) * n / size - 0.5
        low = np.floor(src)
        frac = src - low
        lo, hi = np.clip(low, 0, n - 1).astype(int), np.clip(low + 1, 0, n - 1).astype(int)
        shape = [1] * out.ndim
        shape[axis] = size
        out = np.take(out, lo, axis) * (1 - frac).reshape(shape) + np.take(out, hi, axis) * frac.reshape(shape)
    return out


def test_center_crop_and_rescaling_match_keras():
    keras = pytest.importorskip("keras")
    for h, w in ((7, 6), (8, 5), (6, 6), (3, 7)):
        x = _x(2, h, w, 3)
        for th, tw in ((3, 4), (4, 3), (5, 5), (9, 2)):
            want = np.asarray(keras.layers.CenterCrop(th, tw)(x))
            np.testing.assert_allclose(tl.nn.CenterCrop(th, tw)(x).numpy(), want, rtol=1e-5, atol=1e-6)
    img = RNG.integers(0, 256, size=(2, 4, 4, 3)).astype(np.float32)
    np.testing.assert_allclose(
        tl.nn.Rescaling(1 / 127.5, -1.0)(img).numpy(),
        np.asarray(keras.layers.Rescaling(1 / 127.5, -1.0)(img)),
        rtol=1e-6,
    )


@pytest.mark.parametrize("axis", [-1, 1, (1, 2), None])
def test_normalization_adapt_against_numpy(axis):
    data = RNG.normal(loc=3.0, scale=[1.0, 2.0, 0.5, 4.0], size=(50, 3, 4))
    layer = tl.nn.Normalization(axis=axis)
    layer.adapt(data)
    kept = () if axis is None else tuple(a % 3 for a in ((axis,) if isinstance(axis, int) else axis))
    others = tuple(i for i in range(3) if i not in kept)
    mean, var = data.mean(others, keepdims=True), data.var(others, keepdims=True)
    x = RNG.normal(size=(5, 3, 4))
    want = (x - mean) / np.maximum(np.sqrt(var), 1e-7)
    np.testing.assert_allclose(layer(x).numpy(), want.astype(np.float32), rtol=1e-5, atol=1e-6)
    inverse = tl.nn.Normalization(axis=axis, invert=True)
    inverse.adapt(data)
    np.testing.assert_allclose(inverse(layer(x)).numpy(), x, rtol=1e-5, atol=1e-5)
    assert layer.trainable_variables == {} and sorted(layer.variables) == ["mean", "variance"]
    assert sorted(layer.state_dict()) == ["mean", "variance"]
    check_grads(lambda t: layer(t), [x])


def test_normalization_given_statistics_state_and_errors():
    layer = tl.nn.Normalization(mean=[1.0, 2.0], variance=[4.0, 0.0])
    np.testing.assert_allclose(layer(np.array([[3.0, 2.5]])).numpy(), [[1.0, 0.5 / 1e-7]], rtol=1e-6)
    layer = tl.nn.Normalization(mean=2.0, variance=4.0)
    np.testing.assert_allclose(layer(np.array([[4.0, 0.0, 2.0]])).numpy(), [[1.0, -1.0, 0.0]])
    fresh = tl.nn.Normalization()
    fresh.adapt(np.ones((3, 2)))
    fresh.load_state_dict({"mean": np.array([1.0, 1.0], np.float32), "variance": np.array([1.0, 4.0], np.float32)})
    np.testing.assert_allclose(fresh(np.array([[2.0, 3.0]])).numpy(), [[1.0, 1.0]])
    traced = tl.function(fresh)
    traced(np.ones((1, 2)))
    fresh.adapt(np.array([[0.0, 10.0], [2.0, 30.0]]))  # assigned: the traced function sees the new statistics
    np.testing.assert_allclose(traced(np.array([[1.0, 20.0]])).numpy(), [[0.0, 0.0]])
    with pytest.raises(
        ValueError, match=r"Normalization.adapt: the statistics have shape \(2,\), the new data gives \(3,\)"
    ):
        fresh.adapt(np.ones((4, 3)))
    with pytest.raises(ValueError, match=r"Normalization: call adapt\(data\) first"):
        tl.nn.Normalization()(np.ones((2, 2)))
    with pytest.raises(ValueError, match="Normalization: give both mean and variance"):
        tl.nn.Normalization(mean=1.0)
    with pytest.raises(ValueError, match=r"Normalization: statistics of shape \(2,\) do not fit the sizes \(3,\)"):
        fresh(np.ones((4, 3)))
    with pytest.raises(
        ValueError, match=r"Normalization.adapt: data needs examples to average over, got shape \(0, 2\)"
    ):
        tl.nn.Normalization().adapt(np.ones((0, 2)))


def test_normalization_matches_keras():
    keras = pytest.importorskip("keras")
    data = RNG.normal(loc=2.0, size=(40, 3, 5)).astype(np.float32)
    x = _x(4, 3, 5)
    for axis in (-1, (1, 2), None):
        theirs = keras.layers.Normalization(axis=axis)
        theirs.adapt(data)
        ours = tl.nn.Normalization(axis=axis)
        ours.adapt(data)
        np.testing.assert_allclose(ours(x).numpy(), np.asarray(theirs(x)), rtol=1e-4, atol=1e-5)


def test_unit_normalization():
    x = RNG.normal(size=(3, 4, 5))
    np.testing.assert_allclose(tl.nn.UnitNormalization()(x).numpy(), x / np.linalg.norm(x, axis=-1, keepdims=True))
    want = x / np.sqrt((x**2).sum((1, 2), keepdims=True))
    np.testing.assert_allclose(tl.nn.UnitNormalization((1, 2))(x).numpy(), want)
    assert tl.nn.UnitNormalization()(np.zeros((1, 3))).numpy().tolist() == [[0.0, 0.0, 0.0]]
    check_grads(lambda t: tl.nn.UnitNormalization(1)(t), [x])
    keras = pytest.importorskip("keras")
    x32 = x.astype(np.float32)
    np.testing.assert_allclose(
        tl.nn.UnitNormalization()(x32).numpy(), np.asarray(keras.layers.UnitNormalization()(x32)), rtol=1e-5
    )


# ------------------------------------------------------------------ activations
def _keras_relu(x, max_value, slope, threshold):
    """The documented formula of Keras' ReLU layer."""
    y = np.where(x >= threshold, x, slope * (x - threshold))
    return y if max_value is None else np.minimum(y, max_value)


@pytest.mark.parametrize(
    "max_value,slope,threshold",
    [(None, 0.0, 0.0), (6.0, 0.0, 0.0), (None, 0.1, 0.0), (1.5, 0.3, 0.5), (None, 0.0, 1.0)],
)
def test_relu_with_keras_arguments(max_value, slope, threshold):
    x = np.linspace(-3, 8, 23) + 0.013  # off the kinks
    layer = tl.nn.ReLU(max_value, slope, threshold)
    np.testing.assert_allclose(layer(x).numpy(), _keras_relu(x, max_value, slope, threshold), rtol=1e-12)
    check_grads(layer, [x])


def test_relu_and_elu_match_keras_and_torch():
    keras = pytest.importorskip("keras")
    x = (np.linspace(-3, 8, 23) + 0.013).astype(np.float32)
    for args in ((None, 0.0, 0.0), (6.0, 0.0, 0.0), (1.5, 0.3, 0.5), (None, 0.2, 1.0)):
        want = np.asarray(keras.layers.ReLU(*args)(x))
        np.testing.assert_allclose(tl.nn.ReLU(*args)(x).numpy(), want, rtol=1e-6)
    torch = pytest.importorskip("torch")
    for alpha in (1.0, 0.5, 2.0):
        want = torch.nn.ELU(alpha)(torch.tensor(x)).numpy()
        np.testing.assert_allclose(tl.nn.ELU(alpha)(x).numpy(), want, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(tl.nn.ReLU(6.0)(x).numpy(), torch.nn.ReLU6()(torch.tensor(x)).numpy())


def test_elu_against_numpy_and_errors():
    x = np.linspace(-3, 2, 11) + 0.01
    for alpha in (1.0, 0.5, 2.0):
        np.testing.assert_allclose(tl.nn.ELU(alpha)(x).numpy(), np.where(x > 0, x, alpha * np.expm1(x)), rtol=1e-12)
        check_grads(tl.nn.ELU(alpha), [x], order=2)
    with pytest.raises(ValueError, match="ReLU: negative_slope must be a finite number >= 0, got -0.1"):
        tl.nn.ReLU(negative_slope=-0.1)
    with pytest.raises(ValueError, match="ReLU: max_value must be a finite number >= 0"):
        tl.nn.ReLU(max_value="6")
    with pytest.raises(ValueError, match="ELU: alpha must be a finite number"):
        tl.nn.ELU(None)


# ------------------------------------------------------------------ noise layers
def test_gaussian_noise_and_dropout_statistics_and_eval():
    x = np.full((400, 500), 2.0, np.float32)
    tl.random.seed(3)
    noisy = tl.nn.GaussianNoise(0.5)(x).numpy()
    np.testing.assert_allclose(noisy.mean(), 2.0, atol=0.005)
    np.testing.assert_allclose(noisy.std(), 0.5, rtol=0.01)
    dropped = tl.nn.GaussianDropout(0.2)(x).numpy()
    np.testing.assert_allclose(dropped.mean(), 2.0, atol=0.01)
    np.testing.assert_allclose(dropped.std(), 2.0 * math.sqrt(0.2 / 0.8), rtol=0.01)
    for layer in (tl.nn.GaussianNoise(0.5), tl.nn.GaussianDropout(0.2), tl.nn.AlphaDropout(0.2)):
        a, b = layer(x[:3]).numpy(), layer(x[:3]).numpy()
        assert not np.array_equal(a, b)  # a new draw per call
        tl.random.seed(9)
        c = layer(x[:3]).numpy()
        tl.random.seed(9)
        np.testing.assert_array_equal(c, layer(x[:3]).numpy())
        layer.eval()
        np.testing.assert_array_equal(layer(x[:3]).numpy(), x[:3])
        assert layer(np.zeros((0, 3), np.float32)).shape == (0, 3)
        layer.train()
        assert layer(np.zeros((0, 3), np.float32)).shape == (0, 3)


def test_alpha_dropout_keeps_selu_moments_and_matches_the_formula():
    # For x ~ N(0, 1) the output keeps mean 0 and variance 1 (Klambauer et al. 2017), the reason for a and b.
    x = RNG.normal(size=(500, 400))
    tl.random.seed(4)
    y = tl.nn.AlphaDropout(0.1)(x).numpy()
    np.testing.assert_allclose(y.mean(), 0.0, atol=0.01)
    np.testing.assert_allclose(y.var(), 1.0, rtol=0.015)
    # each element is a * x + b (kept) or a * alpha' + b (dropped)
    alpha_p = -1.6732632423543772848170429916717 * 1.0507009873554804934193349852946
    a = ((1 - 0.1) * (1 + 0.1 * alpha_p**2)) ** -0.5
    b = -a * alpha_p * 0.1
    kept = np.isclose(y, a * x + b, rtol=1e-12, atol=1e-12)
    assert np.allclose(y[~kept], a * alpha_p + b)
    np.testing.assert_allclose(kept.mean(), 0.9, atol=0.005)
    # the gradient is a where kept, 0 where dropped
    tl.random.seed(5)
    layer = tl.nn.AlphaDropout(0.3)
    g = tl.grad(lambda t: layer(t).sum())(x[:20]).numpy()
    assert set(np.round(np.unique(g), 12)) <= {0.0, round(((1 - 0.3) * (1 + 0.3 * alpha_p**2)) ** -0.5, 12)}
    shared = tl.nn.AlphaDropout(0.5, noise_shape=(None, 1))(np.ones((50, 4))).numpy()
    assert (shared == shared[:, :1]).all()


def test_noise_layers_errors_and_traced():
    with pytest.raises(ValueError, match=r"GaussianDropout: rate must be in \[0, 1\), got 1"):
        tl.nn.GaussianDropout(1)
    with pytest.raises(ValueError, match="GaussianNoise: stddev must be a finite number >= 0, got -1"):
        tl.nn.GaussianNoise(-1)
    with pytest.raises(TypeError, match=r"GaussianNoise: input must be floating, got shape \(2,\) \(int64\)"):
        tl.nn.GaussianNoise(1.0)(np.array([1, 2]))
    layer = tl.nn.GaussianNoise(1.0)
    f = tl.function(lambda t: layer(t))
    x = np.zeros((3, 4), np.float32)
    assert not np.array_equal(f(x).numpy(), f(x).numpy())  # a fresh draw per run of the graph
    layer.eval()
    np.testing.assert_array_equal(f(x).numpy(), x)


# ------------------------------------------------------------------ PixelShuffle, Bilinear
def _np_pixel_shuffle(x, r):
    """PyTorch's definition on NCHW: out[n, c, h * r + i, w * r + j] = x[n, c * r * r + i * r + j, h, w]."""
    n, c, h, w = x.shape
    out = np.zeros((n, c // (r * r), h * r, w * r), x.dtype)
    for ch in range(c // (r * r)):
        for i in range(r):
            for j in range(r):
                out[:, ch, i::r, j::r] = x[:, ch * r * r + i * r + j]
    return out


@pytest.mark.parametrize("r", [1, 2, 3])
def test_pixel_shuffle_and_unshuffle_against_the_definition(r):
    x = RNG.normal(size=(2, 2 * r * r, 3, 4))
    want = _np_pixel_shuffle(x, r)
    np.testing.assert_array_equal(tl.nn.PixelShuffle(r, data_format="NCHW")(x).numpy(), want)
    nhwc = tl.nn.PixelShuffle(r)(x.transpose(0, 2, 3, 1)).numpy()
    np.testing.assert_array_equal(nhwc, want.transpose(0, 2, 3, 1))
    np.testing.assert_array_equal(tl.nn.PixelUnshuffle(r, data_format="NCHW")(want).numpy(), x)
    np.testing.assert_array_equal(tl.nn.PixelUnshuffle(r)(want.transpose(0, 2, 3, 1)).numpy(), x.transpose(0, 2, 3, 1))
    check_grads(tl.nn.PixelShuffle(r), [x.transpose(0, 2, 3, 1)])
    f = tl.function(tl.nn.PixelShuffle(r))
    f.get_graph(tl.TensorSpec((None, 3, 4, 2 * r * r), tl.float64))
    np.testing.assert_array_equal(f(x.transpose(0, 2, 3, 1)).numpy(), nhwc)


def test_pixel_shuffle_matches_torch_and_errors():
    torch = pytest.importorskip("torch")
    x = _x(2, 12, 3, 5)
    np.testing.assert_array_equal(
        tl.nn.PixelShuffle(2, data_format="NCHW")(x).numpy(), torch.nn.PixelShuffle(2)(torch.tensor(x)).numpy()
    )
    y = _x(2, 3, 6, 4)
    np.testing.assert_array_equal(
        tl.nn.PixelUnshuffle(2, data_format="NCHW")(y).numpy(), torch.nn.PixelUnshuffle(2)(torch.tensor(y)).numpy()
    )


def test_pixel_shuffle_errors():
    with pytest.raises(
        ValueError, match=r"PixelShuffle: the channels must be known and a multiple of upscale_factor\*\*2 = 4"
    ):
        tl.nn.PixelShuffle(2)(np.ones((1, 2, 2, 6)))
    with pytest.raises(
        ValueError, match=r"PixelUnshuffle: the height and width must be known multiples of downscale_factor=2"
    ):
        tl.nn.PixelUnshuffle(2)(np.ones((1, 3, 2, 6)))
    with pytest.raises(ValueError, match="PixelShuffle: upscale_factor must be a positive integer"):
        tl.nn.PixelShuffle(0)


def test_bilinear_against_numpy_torch_and_module_features():
    layer = tl.nn.Bilinear(3, 4, 2, seed=0, dtype="float64")
    w, b = layer.weight.numpy(), layer.bias.numpy()
    assert np.abs(w).max() <= 1 / math.sqrt(3) and w.shape == (2, 3, 4)
    x1, x2 = RNG.normal(size=(5, 3)), RNG.normal(size=(5, 4))
    want = np.einsum("ni,kij,nj->nk", x1, w, x2) + b
    np.testing.assert_allclose(layer(x1, x2).numpy(), want, rtol=1e-12)
    check_grads(lambda a, c: layer(a, c), [x1, x2])
    with tl.GradientTape() as tape:
        loss = layer(x1, x2).sum()
    grads = tape.gradient(loss, layer.trainable_variables)
    np.testing.assert_allclose(grads["weight"].numpy(), np.einsum("ni,nj->ij", x1, x2)[None].repeat(2, 0))
    assert layer(np.zeros((0, 3)), np.zeros((0, 4))).shape == (0, 2)
    with pytest.raises(
        ValueError,
        match=r"Bilinear: inputs must end in in1_features=3 and in2_features=4 .* got \(5, 4\) \(float64\) and \(5, 4\)",
    ):
        layer(x2, x2)
    torch = pytest.importorskip("torch")
    theirs = torch.nn.Bilinear(3, 4, 2).double()
    with torch.no_grad():
        theirs.weight.copy_(torch.tensor(w))
        theirs.bias.copy_(torch.tensor(b))
    np.testing.assert_allclose(
        layer(x1, x2).numpy(), theirs(torch.tensor(x1), torch.tensor(x2)).detach().numpy(), rtol=1e-12
    )


# ------------------------------------------------------------------ EmbeddingBag
def _np_embedding_bag(table, ids, offsets, mode, weights=None, padding_idx=None, include_last_offset=False):
    """PyTorch's definition, bag by bag: empty bags (and bags of padding only) give zeros."""
    if ids.ndim == 2:
        offsets, ids = np.arange(0, ids.size, ids.shape[1]), ids.ravel()
        weights = None if weights is None else weights.ravel()
    ends = list(offsets[1:]) + ([] if include_last_offset else [len(ids)])
    out = []
    for start, end in zip(offsets, ends):
        rows = [
            table[i] * (1.0 if weights is None else weights[k])
            for k, i in enumerate(ids[start:end], start)
            if i != padding_idx
        ]
        if not rows:
            out.append(np.zeros(table.shape[1]))
        else:
            out.append({"sum": np.sum, "mean": np.mean, "max": np.max}[mode](rows, axis=0))
    return np.array(out)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("padding_idx", [None, 4])
def test_embedding_bag_against_the_definition(mode, padding_idx):
    bag = tl.nn.EmbeddingBag(10, 3, mode=mode, padding_idx=padding_idx, seed=0, dtype="float64")
    table = bag.weight.numpy()
    if padding_idx is not None:
        assert (table[padding_idx] == 0).all()
    ids, offsets = np.array([1, 2, 4, 5, 4, 3, 2, 9, 4]), np.array([0, 2, 2, 4, 8])  # an empty bag, a padding-only
    np.testing.assert_allclose(
        bag(ids, offsets=offsets).numpy(), _np_embedding_bag(table, ids, offsets, mode, None, padding_idx), rtol=1e-12
    )
    ids2 = RNG.integers(0, 10, size=(4, 3))
    ids2[1] = 4  # a bag of padding only where padding_idx is 4
    traced = tl.function(bag)
    traced.get_graph(tl.TensorSpec((None, 3), tl.int64))  # any number of bags (it had refused an unknown one)
    np.testing.assert_allclose(
        traced(ids2).numpy(), _np_embedding_bag(table, ids2, None, mode, None, padding_idx), rtol=1e-12
    )
    assert bag(np.zeros((2, 0), np.int64)).numpy().tolist() == [[0.0] * 3] * 2
    np.testing.assert_allclose(
        bag(ids2).numpy(), _np_embedding_bag(table, ids2, None, mode, None, padding_idx), rtol=1e-12
    )
    last = np.array([0, 2, 2, 4, 8, 9])
    with_last = tl.nn.EmbeddingBag(10, 3, mode=mode, include_last_offset=True, padding_idx=padding_idx, seed=0)
    np.testing.assert_allclose(
        with_last(ids, offsets=last).numpy(),
        _np_embedding_bag(with_last.weight.numpy(), ids, last, mode, None, padding_idx, True),
        rtol=1e-6,
    )
    # the gradient in the table: d/dT sum(out * G), against central differences of the NumPy definition
    G = RNG.normal(size=(5, 3))
    with tl.GradientTape() as tape:
        loss = (bag(ids, offsets=offsets) * G).sum()
    got = tape.gradient(loss, bag.weight).numpy()
    want = np.zeros_like(table)
    for index in np.ndindex(*table.shape):
        step = np.zeros_like(table)
        step[index] = 1e-6
        up = (_np_embedding_bag(table + step, ids, offsets, mode, None, padding_idx) * G).sum()
        down = (_np_embedding_bag(table - step, ids, offsets, mode, None, padding_idx) * G).sum()
        want[index] = (up - down) / 2e-6
    np.testing.assert_allclose(got, want, atol=1e-7)


def test_embedding_bag_per_sample_weights_traced_and_errors():
    bag = tl.nn.EmbeddingBag(6, 2, mode="sum", seed=1, dtype="float64")
    ids, offsets, w = np.array([0, 1, 5, 5]), np.array([0, 1]), RNG.normal(size=4)
    want = _np_embedding_bag(bag.weight.numpy(), ids, offsets, "sum", w)
    np.testing.assert_allclose(bag(ids, offsets, w).numpy(), want, rtol=1e-12)
    check_grads(lambda weights: bag(ids, offsets, weights), [w])
    f = tl.function(bag)
    f.get_graph(tl.TensorSpec((None,), tl.int64), tl.TensorSpec((2,), tl.int64), tl.TensorSpec((None,), tl.float64))
    np.testing.assert_allclose(f(ids, offsets, w).numpy(), want, rtol=1e-12)
    assert bag(np.zeros((0,), np.int64), offsets=np.array([0, 0])).numpy().tolist() == [[0.0, 0.0]] * 2
    cases = [
        (lambda: tl.nn.EmbeddingBag(6, 2)(ids, offsets, w), ValueError, "per_sample_weights needs mode='sum'"),
        (lambda: bag(ids), ValueError, r"input must be 2-D \(one bag per row\), or 1-D with offsets"),
        (lambda: bag(ids, np.array([1, 2])), ValueError, r"offsets must start at 0 and not decrease past"),
        (lambda: bag(ids, np.array([0, 3, 2])), ValueError, r"offsets must start at 0"),
        (lambda: bag(ids.astype(np.float32), offsets), TypeError, r"input must be integer ids, got \(4,\) \(float32\)"),
        (lambda: bag(np.array([0, 6]), offsets), IndexError, "id 6 is out of range"),
        (lambda: tl.nn.EmbeddingBag(6, 2, mode="prod"), ValueError, "mode must be 'sum', 'mean' or 'max'"),
        (lambda: bag(ids, offsets, w[:3]), ValueError, r"per_sample_weights must be floats of the input's shape"),
    ]
    for call, kind, message in cases:
        with pytest.raises(kind, match=message):
            call()


def test_embedding_bag_matches_torch():
    torch = pytest.importorskip("torch")
    ids, offsets = np.array([1, 2, 4, 5, 4, 3, 2, 9]), np.array([0, 2, 2, 4])
    for mode in ("sum", "mean", "max"):
        for padding_idx in (None, 2):
            ours = tl.nn.EmbeddingBag(10, 3, mode=mode, padding_idx=padding_idx, seed=0)
            theirs = torch.nn.EmbeddingBag(10, 3, mode=mode, padding_idx=padding_idx)
            with torch.no_grad():
                theirs.weight.copy_(torch.tensor(ours.weight.numpy()))
            want = theirs(torch.tensor(ids), torch.tensor(offsets))
            want.backward(torch.ones_like(want))
            with tl.GradientTape() as tape:
                got = ours(ids, offsets=offsets)
            np.testing.assert_allclose(got.numpy(), want.detach().numpy(), rtol=1e-6)
            grad = tape.gradient(got, ours.weight).numpy()
            np.testing.assert_allclose(grad, theirs.weight.grad.numpy(), rtol=1e-6)
            rows = np.array([[1, 4, 3], [2, 2, 2], [2, 7, 5]])  # a bag of padding only where padding_idx is 2
            theirs.weight.grad = None
            want = theirs(torch.tensor(rows))
            want.backward(torch.ones_like(want))
            with tl.GradientTape() as tape:
                got = ours(rows)
            np.testing.assert_allclose(got.numpy(), want.detach().numpy(), rtol=1e-6)
            np.testing.assert_allclose(tape.gradient(got, ours.weight).numpy(), theirs.weight.grad.numpy(), rtol=1e-6)
    ours = tl.nn.EmbeddingBag(10, 3, mode="sum", include_last_offset=True, seed=0)
    theirs = torch.nn.EmbeddingBag(10, 3, mode="sum", include_last_offset=True)
    with torch.no_grad():
        theirs.weight.copy_(torch.tensor(ours.weight.numpy()))
    w = _x(8)
    last = np.array([0, 2, 2, 4, 8])
    want = theirs(torch.tensor(ids), torch.tensor(last), per_sample_weights=torch.tensor(w)).detach().numpy()
    np.testing.assert_allclose(ours(ids, last, w).numpy(), want, rtol=1e-6)


# ------------------------------------------------------------------ Masking
def test_masking_zeroes_masked_steps_and_drives_the_recurrent_layers():
    x = _x(3, 5, 2).astype(np.float64)
    x[0, 3:] = 0.0  # right padding
    x[1, 1] = 0.0  # a masked step in the middle
    x[2, 2, 0] = 0.0  # one zero feature only: kept
    masking = tl.nn.Masking()
    keep = (x != 0).any(-1)
    np.testing.assert_array_equal(masking.compute_mask(x).numpy(), keep)
    np.testing.assert_array_equal(masking(x).numpy(), x * keep[..., None])
    # the mask is a constant (the input sits on its discontinuity at a masked step): the gradient is the mask
    np.testing.assert_array_equal(
        tl.grad(lambda t: masking(t).sum())(x).numpy(), np.broadcast_to(keep[..., None], x.shape)
    )
    assert tl.nn.Masking(-1.0).compute_mask(np.full((1, 2, 3), -1.0)).numpy().tolist() == [[False, False]]
    # Keras' rule for the recurrent layers: a masked step keeps the states, so a right-padded sequence ends in the
    # state of its unpadded part
    lstm = tl.nn.LSTM(2, 4, seed=0, dtype="float64")
    padded = lstm(masking(x), mask=masking.compute_mask(x)).numpy()
    np.testing.assert_allclose(padded[0], lstm(x[:1, :3]).numpy()[0], rtol=1e-10)
    with pytest.raises(ValueError, match=r"Masking: input must have at least 2 dimensions .* got \(3,\) \(float64\)"):
        masking(np.ones(3))


def test_masking_matches_keras():
    keras = pytest.importorskip("keras")
    x = _x(3, 5, 2)
    x[0, 3:] = 0.0
    x[1, 1] = 0.0
    ours = tl.nn.LSTM(2, 4, seed=0)
    theirs = keras.layers.LSTM(4)
    theirs.build((None, 5, 2))
    theirs.set_weights([ours.kernel.numpy(), ours.recurrent_kernel.numpy(), ours.bias.numpy()])
    want = np.asarray(keras.Sequential([keras.layers.Masking(), theirs])(x))
    masking = tl.nn.Masking()
    np.testing.assert_allclose(ours(masking(x), mask=masking.compute_mask(x)).numpy(), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(masking(x).numpy(), np.asarray(keras.layers.Masking()(x)))


# ------------------------------------------------------------------ every deterministic new layer, systematically
# (layer, input shapes with the batch first); a list input for the merge layers.
_DETERMINISTIC = {
    "Reshape": (lambda: tl.nn.Reshape((2, -1)), [(3, 4, 3)]),
    "Unflatten": (lambda: tl.nn.Unflatten(1, (2, 3)), [(3, 6)]),
    "Permute": (lambda: tl.nn.Permute((2, 1)), [(3, 4, 2)]),
    "RepeatVector": (lambda: tl.nn.RepeatVector(2), [(3, 4)]),
    "Identity": (lambda: tl.nn.Identity(), [(3, 4)]),
    "Lambda": (lambda: tl.nn.Lambda(tl.sin), [(3, 4)]),
    "Add": (lambda: tl.nn.Add(), [[(3, 4), (1, 4)]]),
    "Subtract": (lambda: tl.nn.Subtract(), [[(3, 4), (3, 4)]]),
    "Multiply": (lambda: tl.nn.Multiply(), [[(3, 4), (3, 1)]]),
    "Average": (lambda: tl.nn.Average(), [[(3, 4), (3, 4), (3, 4)]]),
    "Maximum": (lambda: tl.nn.Maximum(), [[(3, 4), (3, 4)]]),
    "Minimum": (lambda: tl.nn.Minimum(), [[(3, 4), (3, 4)]]),
    "Concatenate": (lambda: tl.nn.Concatenate(), [[(3, 4), (3, 2)]]),
    "Dot": (lambda: tl.nn.Dot(2, normalize=True), [[(3, 2, 4), (3, 5, 4)]]),
    "TimeDistributed": (lambda: tl.nn.TimeDistributed(tl.nn.Dense(4, 2, seed=0, dtype="float64")), [(3, 2, 4)]),
    "Rescaling": (lambda: tl.nn.Rescaling(0.5, 1.0), [(3, 4)]),
    "CenterCrop": (lambda: tl.nn.CenterCrop(2, 3), [(3, 4, 5, 2)]),
    "UnitNormalization": (lambda: tl.nn.UnitNormalization(), [(3, 4)]),
    "Normalization": (lambda: tl.nn.Normalization(mean=[0.5, 1.0, 0.0, 2.0], variance=[1.0, 4.0, 2.0, 9.0]), [(3, 4)]),
    "ELU": (lambda: tl.nn.ELU(0.7), [(3, 4)]),
    "ReLU": (lambda: tl.nn.ReLU(1.0, 0.2, 0.1), [(3, 4)]),
    "PixelShuffle": (lambda: tl.nn.PixelShuffle(2), [(3, 2, 2, 4)]),
    "PixelUnshuffle": (lambda: tl.nn.PixelUnshuffle(2, "NCHW"), [(3, 1, 4, 2)]),
    "Bilinear": (lambda: tl.nn.Bilinear(4, 3, 2, seed=0, dtype="float64"), [(3, 4), (3, 3)]),
    "Masking": (lambda: tl.nn.Masking(5.0), [(3, 2, 4)]),
}


def _draw(shapes, batch, dtype):
    def one(shape):
        return RNG.uniform(0.2, 1.5, size=(batch if shape[0] != 1 else 1, *shape[1:])) * RNG.choice(
            [-1, 1], size=(batch if shape[0] != 1 else 1, *shape[1:])
        )

    return [
        [one(s).astype(dtype) for s in spec] if isinstance(spec, list) else one(spec).astype(dtype) for spec in shapes
    ]


@pytest.mark.parametrize("name", sorted(_DETERMINISTIC))
def test_new_layers_dtypes_traced_empty_batches_and_gradients(name):
    make, shapes = _DETERMINISTIC[name]
    layer = make()
    x64 = _draw(shapes, 3, np.float64)
    y64 = layer(*x64)
    assert y64.dtype == tl.float64, name
    if name not in ("TimeDistributed", "Bilinear"):  # float32 weights would promote
        x32 = [[a.astype(np.float32) for a in v] if isinstance(v, list) else v.astype(np.float32) for v in x64]
        y32 = layer(*x32)
        assert y32.dtype == tl.float32
        np.testing.assert_allclose(y32.numpy(), y64.numpy(), rtol=2e-5, atol=2e-6)
    traced = tl.function(lambda *a: layer(*a))
    np.testing.assert_allclose(traced(*x64).numpy(), y64.numpy(), rtol=1e-12, atol=1e-14)
    empty = _draw(shapes, 0, np.float64)
    y0 = layer(*empty)
    assert y0.shape == (0, *y64.shape[1:])
    flat = [a for v in x64 for a in (v if isinstance(v, list) else [v])]
    sizes = [len(v) if isinstance(v, list) else None for v in x64]

    def f(*arrays):
        arrays, args = list(arrays), []
        for size in sizes:
            args.append([arrays.pop(0) for _ in range(size)] if size else arrays.pop(0))
        return layer(*args)

    if name != "Masking":  # the mask is piecewise constant: checked in its own test
        check_grads(f, flat)


_NEW_INITIALIZERS = [
    "constant",
    "lecun_uniform",
    "lecun_normal",
    "variance_scaling",
    "kaiming_uniform",
    "kaiming_normal",
    "random_normal",
    "random_uniform",
    "truncated_normal",
    "identity",
]


@pytest.mark.parametrize("name", _NEW_INITIALIZERS)
def test_new_initializers_refuse_bad_shapes_and_make_empty_weights(name):
    fn = getattr(init, name)
    with pytest.raises(TypeError, match=rf"initializers.{name}: shape must be a tuple of integers, got \(2.5, 3\)"):
        fn((2.5, 3), seed=0)
    with pytest.raises(ValueError, match=rf"initializers.{name}: shape must not have negative dimensions"):
        fn((3, -1), seed=0)
    for shape in ((3, 0), (0, 3), (0, 0), (np.int64(2), 3)):
        w = fn(shape, seed=0)
        assert w.shape == np.zeros(shape).shape and w.dtype == tl.float32
    assert fn((2, 3), seed=0, dtype="float16").dtype == tl.float16


def test_vmap_of_the_new_layers_is_the_loop_over_examples():
    x = RNG.normal(size=(4, 3, 6))
    bilinear = tl.nn.Bilinear(6, 6, 2, seed=0, dtype="float64")
    for fn in (
        tl.nn.Reshape((2, -1)),
        tl.nn.UnitNormalization(),
        tl.nn.ReLU(1.0, 0.1, 0.2),
        lambda a: tl.nn.Maximum()([a, -a, 0.5 * a]),
        lambda a: tl.nn.Dot(1, normalize=True)([a, a[::-1]]),
        lambda a: bilinear(a, a),
        lambda a: tl.nn.Concatenate(0)([a, a]),
    ):
        np.testing.assert_allclose(tl.vmap(fn)(x).numpy(), np.stack([fn(a).numpy() for a in x]), rtol=1e-12)
    noisy = tl.vmap(tl.nn.GaussianNoise(1.0), randomness="different")(np.zeros((4, 3))).numpy()
    assert not np.array_equal(noisy[0], noisy[1])


def test_orthogonal_gain_and_scalar_shapes_get_errors_naming_the_initializer():
    # orthogonal(gain="2") raised NumPy's UFuncTypeError, gain=None a bare Python TypeError; a 0-d shape's error
    # named no initializer.
    for gain in ("2", None, float("nan")):
        with pytest.raises(ValueError, match=rf"initializers.orthogonal: gain must be a finite number, got {gain!r}"):
            init.orthogonal((3, 3), seed=0, gain=gain)
    for name in ("glorot_uniform", "he_normal", "lecun_normal", "variance_scaling", "kaiming_uniform"):
        with pytest.raises(ValueError, match=rf"initializers.{name}: a weight needs at least one dimension"):
            getattr(init, name)((), seed=0)


def test_normalization_checkpoint_into_a_new_layer_given_statistics_of_the_shape():
    trained = tl.nn.Normalization()
    trained.adapt(RNG.normal(loc=3.0, size=(20, 3)))
    fresh = tl.nn.Normalization(mean=[0.0] * 3, variance=[1.0] * 3)
    assert fresh.load_state_dict(trained.state_dict()) == ([], [])
    x = RNG.normal(size=(2, 3)).astype(np.float32)
    np.testing.assert_array_equal(fresh(x).numpy(), trained(x).numpy())

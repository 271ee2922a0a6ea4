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
    shape = (3, 3, 16, 32)
    for mode in ("fan_in", "fan_out", "fan_avg"):
        for distribution in ("truncated_normal", "untruncated_normal", "uniform"):
            ours = np.stack(
                [init.variance_scaling(shape, s, "float64", 2.0, mode, distribution).numpy() for s in range(20)],
                -1,
            )
            theirs = np.stack(
                [
                    np.asarray(keras.initializers.VarianceScaling(2.0, mode, distribution, seed=s)(shape, "float64"))
                    for s in range(20)
                ]
            )
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

"""tl.Module, the layers in tl.nn and tl.initializers."""

import numpy as np
import pytest

import tensorlib as tl


def test_module_collects_variables_and_submodules_in_order():
    class Block(tl.Module):
        def __init__(self):
            super().__init__()
            self.dense = tl.nn.Dense(3, 4, seed=0)
            self.norm = tl.nn.BatchNorm(4)
            self.heads = [tl.nn.Dense(4, 1, seed=1), tl.nn.Dense(4, 2, seed=2)]
            self.gain = tl.Variable(np.float32(2.0))

        def forward(self, x):
            return self.norm(self.dense(x)) * self.gain

    block = Block()
    assert list(block.variables) == ["gain", "dense", "norm", "heads"]
    assert list(block.variables["norm"]) == ["scale", "offset", "running_mean", "running_var"]
    assert list(block.trainable_variables["norm"]) == ["scale", "offset"]
    assert list(block.trainable_variables["heads"]) == ["0", "1"]
    assert block.trainable_variables["heads"]["1"]["kernel"] is block.heads[1].kernel
    assert block.num_parameters() == 1 + (12 + 4) + 8 + (4 + 1) + (8 + 2)
    block.eval()
    assert not block.norm.training and not block.heads[0].training
    block.train()
    assert block.norm.training


def test_dicts_of_modules_and_subclasses_without_super_init():
    class Heads(tl.Module):
        def __init__(self):  # no super().__init__(): still a Module with a training flag
            self.heads = {"a": tl.nn.Dense(2, 1, seed=0), "b": tl.nn.Dropout(0.5)}

        def forward(self, x):
            return self.heads["b"](self.heads["a"](x))

    m = Heads()
    assert m.training and list(m.variables["heads"]) == ["a"]
    m.eval()
    assert not m.heads["b"].training
    assert m(np.ones((1, 2), np.float32)).shape == (1, 1)


def test_dict_keys_that_are_one_name_as_strings_are_an_error_not_a_lost_variable():
    class Pair(tl.Module):
        def __init__(self):
            super().__init__()
            self.w = {1: tl.Variable(1.0), "1": tl.Variable(2.0), 2: "not state", "2": tl.Variable(3.0)}

    # The int key's Variable vanished from variables: no optimizer updates, no checkpoint, 2 parameters.
    with pytest.raises(
        ValueError, match=r"Module: the keys 1 and '1' of a dict of Modules/Variables are both named '1'"
    ):
        Pair().variables
    with pytest.raises(ValueError, match=r"both named '1'"):
        Pair().num_parameters()
    m = Pair()
    del m.w[1]
    assert sorted(m.variables["w"]) == ["1", "2"]  # a clash with an entry that holds no state is none


def test_gradient_of_a_module_has_its_variable_structure():
    model = tl.nn.Sequential(tl.nn.Dense(2, 3, activation=tl.nn.relu, seed=0), tl.nn.Dense(3, 1, seed=1))
    x = np.array([[1.0, -2.0], [0.5, 3.0]], np.float32)
    with tl.GradientTape() as tape:
        loss = tl.sum(model(x))
    grads = tape.gradient(loss, model.trainable_variables)
    assert {k: sorted(v) for k, v in grads.items()} == {"0": ["bias", "kernel"], "1": ["bias", "kernel"]}
    w0, b0 = model[0].kernel.numpy(), model[0].bias.numpy()
    w1 = model[1].kernel.numpy()
    h = x @ w0 + b0
    np.testing.assert_allclose(grads["1"]["kernel"].numpy(), np.maximum(h, 0).sum(0)[:, None], rtol=1e-5)
    np.testing.assert_allclose(grads["0"]["kernel"].numpy(), x.T @ ((h > 0) * w1.T), rtol=1e-5)


def test_dense_and_conv_match_numpy():
    dense = tl.nn.Dense(3, 2, seed=3)
    x = np.random.default_rng(0).normal(size=(4, 3)).astype(np.float32)
    np.testing.assert_allclose(dense(x).numpy(), x @ dense.kernel.numpy() + dense.bias.numpy(), rtol=1e-6)
    conv = tl.nn.Conv2D(2, 3, kernel_size=(3, 1), padding="VALID", seed=4, bias_initializer="ones")
    img = np.random.default_rng(1).normal(size=(1, 5, 4, 2)).astype(np.float32)
    y = conv(img).numpy()
    k = conv.kernel.numpy()
    expected = sum(np.einsum("nhwc,co->nhwo", img[:, i : i + 3, :, :], k[i, 0]) for i in range(3)) + 1.0
    np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-6)
    assert y.shape == (1, 3, 4, 3)


def test_pools_flatten_and_dropout():
    x = np.arange(32, dtype=np.float32).reshape(1, 4, 4, 2)
    np.testing.assert_array_equal(tl.nn.MaxPool2D(2)(x).numpy(), x.reshape(1, 2, 2, 2, 2, 2).max(axis=(2, 4)))
    np.testing.assert_allclose(tl.nn.AvgPool2D(2, strides=2)(x).numpy(), x.reshape(1, 2, 2, 2, 2, 2).mean(axis=(2, 4)))
    assert tl.nn.Flatten()(x).shape == (1, 32)
    drop = tl.nn.Dropout(0.5)
    y = drop(np.ones((100,), np.float32)).numpy()
    assert set(np.unique(y)) <= {0.0, 2.0} and 0 < (y == 0).sum() < 100
    assert drop.eval()(np.ones((3,), np.float32)).numpy().tolist() == [1.0, 1.0, 1.0]


def test_batchnorm_running_statistics_follow_pytorch():
    rng = np.random.default_rng(0)
    bn = tl.nn.BatchNorm(3, momentum=0.2, epsilon=1e-3)
    run_mean, run_var = np.zeros(3), np.ones(3)
    for _ in range(3):
        x = rng.normal(2.0, 3.0, size=(4, 2, 2, 3)).astype(np.float32)
        y = bn(x).numpy()
        mean, var = x.mean(axis=(0, 1, 2)), x.var(axis=(0, 1, 2))
        np.testing.assert_allclose(y, (x - mean) / np.sqrt(var + 1e-3), rtol=1e-4, atol=1e-5)
        run_mean = 0.8 * run_mean + 0.2 * mean
        run_var = 0.8 * run_var + 0.2 * x.var(axis=(0, 1, 2), ddof=1)
    np.testing.assert_allclose(bn.running_mean.numpy(), run_mean, rtol=1e-5)
    np.testing.assert_allclose(bn.running_var.numpy(), run_var, rtol=1e-5)
    bn.eval()
    x = rng.normal(size=(2, 3)).astype(np.float32)
    np.testing.assert_allclose(bn(x).numpy(), (x - run_mean) / np.sqrt(run_var + 1e-3), rtol=1e-4, atol=1e-5)


def test_batchnorm_trains_under_a_tape_and_in_a_traced_step():
    bn = tl.nn.BatchNorm(2)
    x = np.random.default_rng(0).normal(size=(5, 2)).astype(np.float32)

    def step(x):
        with tl.GradientTape() as tape:
            loss = tl.sum(bn(x) * np.array([1.0, 2.0], np.float32) + tl.square(bn.offset))
        return tape.gradient(loss, bn.trainable_variables)

    eager = step(x)
    traced = tl.function(step)(x)
    np.testing.assert_allclose(traced["scale"].numpy(), eager["scale"].numpy(), atol=1e-5)
    # One eager and one traced update, each running = 0.9 * running + 0.1 * batch mean.
    np.testing.assert_allclose(bn.running_mean.numpy(), (1 - 0.9**2) * x.mean(0), rtol=1e-5)


def test_layers_are_reproducible_from_their_seed():
    a, b, c = tl.nn.Conv2D(2, 4, 3, seed=7), tl.nn.Conv2D(2, 4, 3, seed=7), tl.nn.Conv2D(2, 4, 3, seed=8)
    assert np.array_equal(a.kernel.numpy(), b.kernel.numpy())
    assert not np.array_equal(a.kernel.numpy(), c.kernel.numpy())
    tl.random.seed(5)
    d = tl.nn.Dense(3, 3)
    tl.random.seed(5)
    assert np.array_equal(d.kernel.numpy(), tl.nn.Dense(3, 3).kernel.numpy())


@pytest.mark.parametrize(
    "name,bound",
    [("glorot_uniform", lambda fi, fo: np.sqrt(6 / (fi + fo))), ("he_uniform", lambda fi, fo: np.sqrt(6 / fi))],
)
def test_uniform_initializers_fill_their_range(name, bound):
    w = tl.initializers.get(name)((3, 3, 8, 16), seed=0).numpy()
    limit = bound(72, 144)
    assert w.dtype == np.float32 and np.abs(w).max() <= limit and np.abs(w).max() > 0.95 * limit
    np.testing.assert_allclose(w.var(), limit**2 / 3, rtol=0.05)


@pytest.mark.parametrize(
    "name,std",
    [("glorot_normal", lambda fi, fo: np.sqrt(2 / (fi + fo))), ("he_normal", lambda fi, fo: np.sqrt(2 / fi))],
)
def test_normal_initializers_have_their_std(name, std):
    w = tl.initializers.get(name)((200, 100), seed=0, dtype=tl.float64).numpy()
    assert w.dtype == np.float64
    np.testing.assert_allclose(w.std(), std(200, 100), rtol=0.03)
    assert abs(w.mean()) < 0.01 * std(200, 100) * 10


def test_orthogonal_and_constant_initializers():
    q = tl.initializers.orthogonal((3, 5), seed=1, dtype=tl.float64).numpy()
    np.testing.assert_allclose(q @ q.T, np.eye(3), atol=1e-12)
    q = tl.initializers.orthogonal((2, 3, 4), seed=1, dtype=tl.float64).numpy().reshape(6, 4)
    np.testing.assert_allclose(q.T @ q, np.eye(4), atol=1e-12)
    assert tl.initializers.zeros((2,)).numpy().tolist() == [0.0, 0.0]
    with pytest.raises(ValueError, match="unknown initializer 'uniformish'"):
        tl.initializers.get("uniformish")


def test_layer_errors_name_the_layer_and_shapes():
    with pytest.raises(
        ValueError,
        match=r"Dense: input's last dimension must be in_features=3, got input shape "
        r"\(2, 4\)",
    ):
        tl.nn.Dense(3, 1, seed=0)(np.ones((2, 4), np.float32))
    with pytest.raises(ValueError, match="Conv2D: out_channels must be a positive integer, got 0"):
        tl.nn.Conv2D(1, 0, 3)
    with pytest.raises(ValueError, match=r"BatchNorm: input's last \(channel\) dimension must be num_features=3"):
        tl.nn.BatchNorm(3)(np.ones((2, 4), np.float32))
    with pytest.raises(ValueError, match=r"Dropout: rate must be in \[0, 1\), got 1.0"):
        tl.nn.Dropout(1.0)
    with pytest.raises(TypeError, match="Sequential: layer 1 is a int"):
        tl.nn.Sequential(tl.nn.Flatten(), 3)
    with pytest.raises(TypeError, match="must define forward"):
        tl.Module()(1)


def test_traced_training_step_equals_eager():
    def build():
        return tl.nn.Sequential(
            tl.nn.Conv2D(1, 2, 3, seed=0),
            tl.nn.BatchNorm(2),
            tl.nn.MaxPool2D(2),
            tl.nn.Flatten(),
            tl.nn.Dense(8, 3, seed=1),
        )

    x = np.random.default_rng(0).normal(size=(4, 4, 4, 1)).astype(np.float32)
    labels = np.array([0, 1, 2, 1])
    results = []
    for traced in (False, True):
        model, opt = build(), tl.optimizers.Adam(0.01)

        def step(x, labels):
            with tl.GradientTape() as tape:
                loss = tl.mean(tl.nn.sparse_softmax_cross_entropy_with_logits(labels, model(x)))
            opt.apply(tape.gradient(loss, model.trainable_variables), model.trainable_variables)
            return loss

        run = tl.function(step) if traced else step
        losses = [float(run(x, labels)) for _ in range(3)]
        results.append((losses, model[0].kernel.numpy(), model[1].running_var.numpy()))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-5)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(results[0][2], results[1][2], rtol=1e-5)
    assert results[0][0][2] < results[0][0][0]


@pytest.mark.parametrize(
    "name", ["zeros", "ones", "glorot_uniform", "glorot_normal", "he_uniform", "he_normal", "orthogonal"]
)
def test_initializers_refuse_bad_shapes_and_make_empty_weights(name):
    # (2.5, 3) silently gave a (2, 3) weight; (3, -1), None and 'x' gave NumPy's or Python's raw errors;
    # orthogonal((3, 0)) raised "cannot reshape array of size 0".  Reference: np.zeros' shape rules.
    init = getattr(tl.initializers, name)
    with pytest.raises(TypeError, match=rf"initializers.{name}: shape must be a tuple of integers, got \(2.5, 3\)"):
        init((2.5, 3), seed=0)
    for bad in (None, "x"):
        with pytest.raises(TypeError, match=rf"initializers.{name}: shape must be a tuple of integers"):
            init(bad, seed=0)
    with pytest.raises(ValueError, match=rf"initializers.{name}: shape must not have negative dimensions"):
        init((3, -1), seed=0)
    for shape in ((3, 0), (0, 3), (np.int64(2), 3)):
        w = init(shape, seed=0)
        assert w.shape == np.zeros(shape).shape and w.dtype == tl.float32


def test_layer_arguments_of_the_wrong_kind_get_one_clear_error():
    # Each of these raised a raw Python error naming no layer ('<=' not supported between 'float' and
    # 'NoneType'; could not convert string to float; 'str' object is not callable at the first call),
    # or was accepted and gave NaN outputs (a negative epsilon) or integer weights (dtype=int32).
    cases = [
        (
            lambda: tl.nn.BatchNorm(3, momentum="0.1"),
            ValueError,
            r"BatchNorm: momentum must be in \[0, 1\] or None, got .0.1.",
        ),
        (lambda: tl.nn.BatchNorm(3, epsilon=-1.0), ValueError, "BatchNorm: epsilon must be a number >= 0, got -1.0"),
        (lambda: tl.nn.LayerNorm(3, epsilon=float("nan")), ValueError, "LayerNorm: epsilon must be a number >= 0"),
        (lambda: tl.nn.BatchNorm(3, dtype=tl.int32), TypeError, "BatchNorm: dtype must be a float dtype, got int32"),
        (lambda: tl.nn.LayerNorm(3, dtype="int64"), TypeError, "LayerNorm: dtype must be a float dtype, got int64"),
        (lambda: tl.nn.Dropout(None), ValueError, r"Dropout: rate must be in \[0, 1\), got None"),
        (lambda: tl.nn.Dropout("a"), ValueError, r"Dropout: rate must be in \[0, 1\), got 'a'"),
        (lambda: tl.nn.Dense(3, 2, activation="nope"), ValueError, "Dense: activation must be None, a callable or"),
        (lambda: tl.nn.Conv2D(3, 2, 3, activation=1), ValueError, "Conv2D: activation must be None, a callable or"),
    ]
    for make, error, message in cases:
        with pytest.raises(error, match=message):
            make()
    dense = tl.nn.Dense(3, 2, activation="relu", seed=0)  # Keras' names for tl.nn functions
    x = np.array([[1.0, -2.0, 0.5]], np.float32)
    np.testing.assert_array_equal(dense(x).numpy(), np.maximum(x @ dense.kernel.numpy() + dense.bias.numpy(), 0))


def test_a_slice_of_a_sequential_is_a_sequential_sharing_the_layers():
    # model[:1] was a plain list: calling it raised "'list' object is not callable" (PyTorch gives a Sequential).
    model = tl.nn.Sequential(tl.nn.Dense(3, 4, seed=0, activation="relu"), tl.nn.Dense(4, 2, seed=1))
    head = model[:1]
    x = np.ones((2, 3), np.float32)
    np.testing.assert_array_equal(head(x).numpy(), model[0](x).numpy())
    assert isinstance(head, tl.nn.Sequential) and head[0] is model[0] and list(head.trainable_variables) == ["0"]
    assert isinstance(model[-1], tl.nn.Dense)

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


def test_conv2d_kernel_size_of_the_wrong_length_is_one_clear_error():
    with pytest.raises(ValueError, match=r"Conv2D: kernel_size must be an int or a pair \(kh, kw\), got \(3,\)"):
        tl.nn.Conv2D(1, 1, kernel_size=(3,))


def test_complex_variables_round_trip_through_a_checkpoint(tmp_path):
    # The format has no complex128 (and complex64 only in newer safetensors): save_variables refused them.
    st = pytest.importorskip("safetensors.numpy")
    rng = np.random.default_rng(0)
    values = {
        "z": rng.normal(size=(2, 3)) + 1j * rng.normal(size=(2, 3)),
        "y": (rng.normal(size=4) - 1j).astype(np.complex64),
        "s": np.array(2.0 - 1.5j),
        "none": np.zeros((0, 2), np.complex64),
        "w": rng.normal(size=3),
    }
    path = tmp_path / "c.safetensors"
    tl.save_variables(path, {k: tl.Variable(v) for k, v in values.items()})
    loaded = tl.load_variables(path)
    for k, v in values.items():
        assert loaded[k].dtype == v.dtype and loaded[k].shape == v.shape
        np.testing.assert_array_equal(loaded[k].numpy(), v)
    target = {k: tl.Variable(np.zeros_like(v)) for k, v in values.items()}
    tl.load_variables(path, target)
    for k, v in values.items():
        np.testing.assert_array_equal(target[k].numpy(), v)
    # what the file holds, read by safetensors itself: (real, imaginary) pairs along a last axis of 2
    raw = st.load_file(str(path))
    np.testing.assert_array_equal(raw["z"][..., 0], values["z"].real)
    np.testing.assert_array_equal(raw["z"][..., 1], values["z"].imag)
    assert raw["y"].dtype == np.float32 and raw["s"].shape == (2,)


def test_a_header_that_marks_a_wrong_entry_complex_is_named(tmp_path):
    st = pytest.importorskip("safetensors.numpy")
    path = str(tmp_path / "bad.safetensors")
    st.save_file(
        {"odd": np.ones((2, 3)), "ints": np.ones((2, 2), np.int32)},
        path,
        metadata={"format": "tensorlib", "tensorlib.complex": '["odd", "ints"]'},
    )
    with pytest.raises(TypeError, match=r"'odd'.*marks it complex, but it holds \(2, 3\) float64"):
        tl.load_variables(path)
    target = {"odd": tl.Variable(np.zeros(2, np.complex128)), "ints": tl.Variable(np.zeros(2, np.complex64))}
    with pytest.raises(ValueError, match=r"'ints' cannot be read: the header marks it complex.*int32"):
        tl.load_variables(path, target)
    np.testing.assert_array_equal(target["odd"].numpy(), 0)  # nothing assigned


def test_a_checkpoint_file_gets_the_umask_permissions(tmp_path):
    import os

    pytest.importorskip("safetensors")
    old = os.umask(0o022)
    try:
        tl.save_variables(tmp_path / "m.safetensors", tl.nn.Dense(2, 2, seed=0))
    finally:
        os.umask(old)
    assert (tmp_path / "m.safetensors").stat().st_mode & 0o777 == 0o644
    assert [p.name for p in tmp_path.iterdir()] == ["m.safetensors"]


class _Mixed(tl.Module):
    """Layers beside an activation in one list, Variables in a list and a dict, a nested list."""

    def __init__(self):
        super().__init__()
        self.layers = [tl.nn.Dense(2, 3, seed=0), tl.nn.relu, tl.nn.Dense(3, 1, seed=1)]
        self.scales = [tl.Variable([2.0]), "not state"]
        self.named = {"shift": tl.Variable([0.5]), "nested": [tl.Variable([1.0])]}

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x * self.scales[0] + self.named["shift"] * self.named["nested"][0]


def test_variables_in_mixed_lists_and_dicts_are_found_and_trained():
    model = _Mixed()
    found = model.trainable_variables
    assert sorted(found["layers"]) == ["0", "2"] and sorted(found["layers"]["0"]) == ["bias", "kernel"]
    assert found["scales"]["0"] is model.scales[0]
    assert found["named"]["shift"] is model.named["shift"] and found["named"]["nested"]["0"] is model.named["nested"][0]
    assert model.num_parameters() == (2 * 3 + 3) + (3 * 1 + 1) + 3
    x = tl.ones((4, 2))
    with tl.GradientTape() as tape:
        loss = tl.sum(model(x))
    grads = tape.gradient(loss, found)
    before = model.scales[0].numpy().copy()
    tl.optimizers.SGD(0.1).apply(grads, found)
    np.testing.assert_allclose(model.scales[0].numpy(), before - 0.1 * grads["scales"]["0"].numpy())
    assert [type(m).__name__ for m in model.modules()] == ["_Mixed", "Dense", "Dense"]


def test_a_back_reference_to_the_parent_ends_the_walk():
    class Parent(tl.Module):
        def __init__(self):
            super().__init__()
            self.child = tl.nn.Dense(1, 1, seed=0)
            self.child.parent = self  # a back reference, as a callback or a tree walk might keep

    model = Parent()
    assert sorted(model.trainable_variables["child"]) == ["bias", "kernel"]
    assert model.num_parameters() == 2
    assert model.eval().modules() == [model, model.child] and not model.child.training


@pytest.mark.parametrize("traced", [False, True], ids=["eager", "traced"])
@pytest.mark.parametrize(
    "draw, error, message",
    [
        # Float draws were cast to the dtype: int32 normals mostly 0, bool uniforms all True.
        (lambda: tl.random.normal((3,), dtype=tl.int32), TypeError, "normal samples need a float dtype, got int32"),
        (lambda: tl.random.truncated_normal((3,), dtype=tl.int64), TypeError, "need a float dtype, got int64"),
        (lambda: tl.random.uniform((3,), 0, 3, dtype=tl.bool_), TypeError, "need a float or integer dtype, got bool"),
        # Integer uniforms: bounds 0.5 or 2**40 for int32 were truncated or wrapped.
        (lambda: tl.random.uniform((3,), 0.5, 3, dtype=tl.int32), ValueError, "got minval=0.5, maxval=3"),
        (lambda: tl.random.uniform((3,), 0, 2**40, dtype=tl.int32), ValueError, "within int32's range"),
        (lambda: tl.random.bernoulli((3,), p=2.0), ValueError, r"p must be in \[0, 1\], got 2.0"),  # was all True
        (lambda: tl.random.normal((2.5,)), TypeError, r"RandomStandardNormal: shape must be integers, got \(2.5,\)"),
        (lambda: tl.random.normal((2,), seed=3.7), TypeError, "seed must be a non-negative integer or None, got 3.7"),
    ],
)
def test_random_draws_the_dtype_bounds_or_shape_cannot_give_are_errors(draw, error, message, traced):
    with pytest.raises(error, match=message):
        (tl.function(draw) if traced else draw)()


def test_random_integer_uniforms_an_int_shape_and_permutation_arguments():
    ints = tl.random.uniform(1000, -2, 3, dtype=tl.int32, seed=0)  # an int shape: was TypeError, not iterable
    assert ints.shape == (1000,) and ints.dtype == tl.int32
    assert sorted(set(ints.numpy().tolist())) == [-2, -1, 0, 1, 2]
    np.testing.assert_array_equal(
        tl.random.permutation(np.int64(5), seed=1).numpy(), np.random.default_rng(1).permutation(5)
    )
    with pytest.raises(TypeError, match=r"full: shape must be integers, got \(2.5,\)"):
        tl.zeros((2.5,))  # was shape (2,)
    with pytest.raises(ValueError, match="tl.random.permutation: n must be a non-negative integer, got -1"):
        tl.random.permutation(-1)  # was an empty permutation
    with pytest.raises(ValueError, match="tl.random.seed: seed must be a non-negative integer or None, got -3"):
        tl.random.seed(-3)
    with pytest.raises(TypeError, match="tl.random.Generator.normal: normal samples need a float dtype"):
        tl.random.Generator(0).normal((2,), dtype=tl.int32)


@pytest.mark.parametrize("name", ["glorot_uniform", "glorot_normal", "he_uniform", "he_normal", "orthogonal"])
def test_initializers_of_empty_weights_and_integer_dtypes(name):
    init = getattr(tl.initializers, name)
    for shape in [(0, 3), (3, 0), (0, 0), (3, 3, 0, 4)]:  # a zero fan was a ZeroDivisionError
        w = init(shape, seed=0)
        assert w.shape == shape and w.dtype == tl.float32
    # A random weight in an integer dtype was its draws truncated (mostly zeros), as Keras refuses it.
    with pytest.raises(TypeError, match=f"initializers.{name}: random weights need a float dtype, got int32"):
        init((2, 2), seed=0, dtype=tl.int32)


def test_layer_sizes_that_are_not_integers_name_the_layer():
    with pytest.raises(ValueError, match="Dense: in_features must be a positive integer, got None"):
        tl.nn.Dense(None, 3)  # int(None) raised a bare TypeError
    with pytest.raises(ValueError, match=r"Conv2D: out_channels must be a positive integer, got \[4\]"):
        tl.nn.Conv2D(3, [4], 3)
    assert tl.nn.Dense(2.0, np.int64(3)).kernel.shape == (2, 3)

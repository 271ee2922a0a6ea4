"""Layers, optimizers and the toolkit attacked where the last session left them open, and in training loops as a
Keras / PyTorch user writes them.

References: Keras' definitions (truncated normals of ``scipy.stats.truncnorm``), NumPy formulas of the optimizers'
updates, uninterrupted runs against resumed ones, float64 central differences, and torch / TensorFlow with the same
weights where they are installed.
"""

import numpy as np
import pytest
import scipy.stats

import tensorlib as tl

_TRUNCATED = scipy.stats.truncnorm(-2.0, 2.0)


@pytest.mark.parametrize(
    "name, variance",
    [
        ("glorot_normal", lambda fi, fo: 2.0 / (fi + fo)),
        ("he_normal", lambda fi, fo: 2.0 / fi),
        ("lecun_normal", lambda fi, fo: 1.0 / fi),
    ],
)
def test_keras_normal_initializers_are_truncated_at_two_deviations_with_the_variance_asked(name, variance):
    # Keras' GlorotNormal and HeNormal are VarianceScaling(distribution="truncated_normal"): a normal truncated
    # at two of its deviations, scaled by 1 / truncnorm(-2, 2).std() = 1 / 0.8796.  Ours were untruncated normals
    # (kurtosis 3.0, largest |w| 4.7 deviations, where Keras' are 2.36 and at most 2.27).
    shape = (3, 3, 40, 60)
    fan_in, fan_out = 9 * 40, 9 * 60
    w = tl.initializers.get(name)(shape, seed=1, dtype=tl.float64).numpy().ravel()
    std = np.sqrt(variance(fan_in, fan_out))
    np.testing.assert_allclose(w.std(), std, rtol=0.02)
    bound = 2.0 * std / _TRUNCATED.std()
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.99 * bound
    kurtosis = np.mean((w / w.std()) ** 4)
    np.testing.assert_allclose(kurtosis, _TRUNCATED.stats(moments="k") + 3.0, rtol=0.02)


@pytest.mark.parametrize("magnitude", [3e20, 1e25, 1e-30, 1e-40])
@pytest.mark.parametrize("traced", [False, True])
def test_global_norm_clipping_in_float32_is_right_where_the_squares_overflow_or_underflow(magnitude, traced):
    # 3e20 ** 2 overflows float32: the norm was inf and every clipped gradient NaN; 1e-30 ** 2 underflows: the
    # norm was 0.  The reference is the same computation in float64, where the squares fit.
    rng = np.random.default_rng(0)
    grads = [(rng.uniform(0.5, 1.0, size=s) * magnitude).astype(np.float32) for s in [(3, 2), (4,)]]
    wide = [g.astype(np.float64) for g in grads]
    norm = np.sqrt(sum((g**2).sum() for g in wide))

    def clip(a, b):
        return tl.optimizers.clip_by_global_norm([a, b], 1.0)

    clipped, got = (tl.function(clip) if traced else clip)(*grads)
    np.testing.assert_allclose(float(got), norm, rtol=1e-6)
    for c, g in zip(clipped, wide):
        assert c.dtype == tl.float32
        np.testing.assert_allclose(c.numpy(), g * min(1.0, 1.0 / norm), rtol=1e-6, atol=0)
    one = tl.optimizers.clip_by_norm(grads[0], 1.0, axes=1).numpy()
    rows = np.sqrt((wide[0] ** 2).sum(axis=1, keepdims=True))
    np.testing.assert_allclose(one, wide[0] / np.maximum(rows, 1.0), rtol=1e-6, atol=0)


def test_global_norm_gradient_is_the_normalized_tensors_and_zero_at_zero():
    x = np.array([3.0, -4.0, 1.0])
    g = tl.grad(lambda t: tl.optimizers.global_norm([t, 2.0 * t]))(x).numpy()
    eps = 1e-6
    numeric = [
        (np.sqrt(5 * ((x + eps * e) ** 2).sum()) - np.sqrt(5 * ((x - eps * e) ** 2).sum())) / (2 * eps)
        for e in np.eye(3)
    ]
    np.testing.assert_allclose(g, numeric, rtol=1e-7)
    assert np.array_equal(tl.grad(lambda t: tl.optimizers.global_norm([t]))(np.zeros(2)).numpy(), np.zeros(2))
    assert np.isposinf(float(tl.optimizers.global_norm([np.array([np.inf, 1.0])])))
    assert np.isnan(float(tl.optimizers.global_norm([np.array([np.nan, np.inf])])))


class _Block(tl.Module):
    """A user's Module whose forward takes no ``training``: the mode reaches its layers through the call."""

    def __init__(self):
        super().__init__()
        self.dense = tl.nn.Dense(6, 6, seed=0, dtype=tl.float64)
        self.norm = tl.nn.BatchNorm(6, momentum=0.5, dtype=tl.float64)
        self.drop = tl.nn.Dropout(0.5)

    def forward(self, x):
        return self.drop(self.norm(self.dense(x)))


def _containers():
    return [
        ("Sequential", lambda: tl.nn.Sequential(_Block())),
        ("nested Sequential", lambda: tl.nn.Sequential(tl.nn.Sequential([_Block()]))),
        ("user Module", _Block),
        ("TimeDistributed", lambda: tl.nn.TimeDistributed(_Block())),
    ]


@pytest.mark.parametrize("name, make", _containers())
@pytest.mark.parametrize("traced", [False, True])
def test_a_containers_training_argument_reaches_every_layer_inside(name, make, traced):
    # Sequential(...)(x, training=False) raised TypeError (forward(x) takes no training), and a user's Module
    # or TimeDistributed called with training=False let its Dropout drop and its BatchNorm use (and move) batch
    # statistics.  Keras passes the call's training to every layer called inside it.  Reference: NumPy.
    model = make()
    block = next(m for m in model.modules() if isinstance(m, _Block))
    x = np.random.default_rng(1).normal(size=(2, 5, 6) if name == "TimeDistributed" else (5, 6))
    call = tl.function(lambda x, training: model(x, training=training)) if traced else model
    kernel, bias = block.dense.kernel.numpy(), block.dense.bias.numpy()
    h = x @ kernel + bias
    y = call(x, training=False).numpy()  # running statistics 0 and 1, no dropout
    np.testing.assert_allclose(y, h / np.sqrt(1.0 + 1e-5), rtol=1e-12)
    assert np.array_equal(block.norm.running_mean.numpy(), np.zeros(6))
    model.eval()
    y = call(x, training=True).numpy()  # batch statistics, dropout, even in eval() mode
    flat = h.reshape(-1, 6)
    normed = (h - flat.mean(0)) / np.sqrt(flat.var(0) + 1e-5)
    kept = y != 0
    assert 0 < kept.mean() < 1
    np.testing.assert_allclose(y[kept], 2.0 * normed[kept], rtol=1e-10)
    np.testing.assert_allclose(block.norm.running_mean.numpy(), 0.5 * flat.mean(0), rtol=1e-12)
    assert block.drop.training is False  # the call's mode is not the layer's


def test_an_explicit_training_argument_inside_wins_and_non_bool_is_refused():
    class Inner(tl.Module):
        def __init__(self):
            super().__init__()
            self.drop = tl.nn.Dropout(0.5)

        def forward(self, x):
            return self.drop(x, training=True)

    x = np.ones((100,))
    assert (tl.nn.Sequential(Inner())(x, training=False).numpy() == 0).any()
    with pytest.raises(TypeError, match="Sequential: training must be True, False or None, got 'no'"):
        tl.nn.Sequential(Inner())(x, training="no")
    with pytest.raises(TypeError, match="unexpected keyword argument 'trainig'"):
        tl.nn.Sequential(Inner())(x, trainig=False)


@pytest.mark.parametrize("kind", ["SimpleRNN", "LSTM", "GRU"])
@pytest.mark.parametrize("traced", [False, True])
def test_a_recurrent_layers_seed_seeds_its_dropout_masks(kind, traced):
    # tl.nn.LSTM(..., seed=1, dropout=0.5) drew its masks from the global stream: two layers of one seed gave
    # different outputs, and tl.random.seed(...) between calls changed them.  As Keras 3's (and tl.nn.Dropout's
    # seed): the masks of a layer's n-th call are a function of its seed and n.
    x = np.random.default_rng(0).normal(size=(3, 5, 2))
    make = getattr(tl.nn, kind)
    layers = [make(2, 4, seed=1, dropout=0.5, recurrent_dropout=0.3, dtype=tl.float64) for _ in range(2)]
    calls = [tl.function(lambda t, m=m: m(t)) if traced else m for m in layers]
    tl.random.seed(3)
    first = calls[0](x).numpy()
    tl.random.seed(4)
    assert np.array_equal(calls[1](x).numpy(), first)
    second = calls[0](x).numpy()
    assert not np.array_equal(second, first) and np.array_equal(calls[1](x).numpy(), second)
    assert not np.array_equal(first, layers[0](x, training=False).numpy())
    # The stream's counter is saved beside the weights (not trained): a resumed run draws on.
    assert sorted(layers[0].variables) == sorted([*make(2, 4).variables, "seed_state"])
    assert sorted(layers[0].trainable_variables) == sorted(make(2, 4).trainable_variables)


_OPTIMIZERS = [
    ("SGD", dict(learning_rate=0.1, momentum=0.9, nesterov=True, weight_decay=0.01, dampening=0.0)),
    ("Adam", dict(learning_rate=0.05, beta_1=0.8, beta_2=0.95, epsilon=1e-3, weight_decay=0.02)),
    ("AdamW", dict(learning_rate=0.05, beta_1=0.7, beta_2=0.9, epsilon=1e-4, weight_decay=0.1, amsgrad=True)),
    ("RMSprop", dict(learning_rate=0.02, rho=0.8, momentum=0.5, epsilon=1e-3, centered=True, weight_decay=0.01)),
    ("Adagrad", dict(learning_rate=0.1, lr_decay=0.01, weight_decay=0.01, epsilon=1e-5)),
    ("NAdam", dict(learning_rate=0.05, beta_1=0.8, beta_2=0.9, epsilon=1e-4, momentum_decay=0.003)),
    ("Lion", dict(learning_rate=0.01, beta_1=0.8, beta_2=0.95, weight_decay=0.1)),
]


def _quadratic_grads(w, step):
    """The gradient of ``sum((w - target_t) ** 2 * scale)`` at step ``t``: it changes with the step."""
    target = np.sin(np.arange(w.size).reshape(w.shape) + step)
    return 2.0 * (w.numpy() - target) * np.linspace(0.5, 2.0, w.size).reshape(w.shape)


@pytest.mark.parametrize("name, settings", _OPTIMIZERS, ids=[n for n, _ in _OPTIMIZERS])
@pytest.mark.parametrize("schedule", [False, True])
@pytest.mark.parametrize("traced", [False, True])
def test_a_run_resumed_from_a_saved_optimizer_equals_the_uninterrupted_run(name, settings, schedule, traced, tmp_path):
    # state_dict() kept the learning rate and the slots but none of the other hyperparameters: an Adam(beta_1=0.8,
    # ...) saved and loaded into Adam() (PyTorch's load_state_dict restores every param group value) resumed with
    # beta_1=0.9, beta_2=0.999, epsilon=1e-7: a silently different run.  Reference: the uninterrupted run, step by
    # step, through a file (tl.save_variables / tl.load_variables) and through state_dict().
    make = getattr(tl.optimizers, name)
    if schedule:
        settings = dict(settings, learning_rate=tl.optimizers.ExponentialDecay(settings["learning_rate"], 2, 0.5))
    start = np.random.default_rng(0).normal(size=(2, 3))

    def run(opt, w, steps):
        step = tl.function(lambda g: opt.apply([g], [w])) if traced else (lambda g: opt.apply([g], [w]))
        for t in steps:
            step(tl.tensor(_quadratic_grads(w, t)))
            yield w.numpy().copy()

    w = tl.Variable(start.copy())
    uninterrupted = list(run(make(**settings), w, range(8)))

    w, opt = tl.Variable(start.copy()), make(**settings)
    first = list(run(opt, w, range(4)))
    tl.save_variables(tmp_path / "opt.safetensors", {"opt": opt, "w": w})
    saved = opt.state_dict()
    for how in ("file", "state_dict"):
        # What picks the rule's ops and slots (nesterov, amsgrad, centered, a momentum > 0) is the optimizer's
        # structure, given to the constructor as Keras' config is; the numbers come from the checkpoint.
        flags = {k: v for k, v in settings.items() if isinstance(v, bool)}
        if flags.get("nesterov") or flags.get("centered"):
            flags["momentum"] = 0.3
        fresh = make(**flags, **({"learning_rate": settings["learning_rate"]} if schedule else {}))
        w = tl.Variable(np.zeros((2, 3)))
        if how == "file":
            tl.load_variables(tmp_path / "opt.safetensors", {"opt": fresh, "w": w})
        else:
            w.assign(first[-1])
            fresh.load_state_dict(saved)
        for k, v in settings.items():
            if k != "learning_rate" and not isinstance(v, bool):
                assert getattr(fresh, k) == v, k
        resumed = first + list(run(fresh, w, range(4, 8)))
        np.testing.assert_allclose(resumed, uninterrupted, rtol=1e-12, atol=1e-15)


def test_old_optimizer_files_without_hyperparameters_still_load():
    opt = tl.optimizers.Adam(0.1, beta_1=0.5)
    w = tl.Variable([1.0, 2.0])
    opt.apply([tl.tensor([1.0, -1.0])], [w])
    state = {k: v for k, v in opt.state_dict().items() if not k.startswith("hyperparameters.")}
    fresh = tl.optimizers.Adam(0.1, beta_1=0.5)
    assert fresh.load_state_dict(state) == ([], [])
    assert fresh.beta_1 == 0.5 and fresh.iterations.numpy() == 1


@pytest.mark.parametrize("how", ["eager", "traced", "traced constant"])
@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_enable_check_numerics_refuses_a_nan_or_inf_assigned_to_a_variable(how, bad):
    # v.assign(array with NaN) under enable_check_numerics went through (no op produced it), eagerly and as a
    # graph's assign step, so a NaN reached the weights unreported.  The Variable keeps its value.
    v = tl.Variable(np.array([1.0, 2.0], np.float32), name="w")
    value = np.array([bad, 1.0], np.float32)
    assign = {
        "eager": lambda: v.assign(value),
        "traced": lambda: tl.function(lambda a: v.assign(a))(value),
        "traced constant": lambda: tl.function(lambda: v.assign(tl.tensor([bad, 1.0])))(),
    }[how]
    kind = "NaN" if np.isnan(bad) else "Inf"
    with tl.debugging.enable_check_numerics():
        with pytest.raises(tl.debugging.NumericsError, match=rf"variable 'w' \(shape \(2,\), float32\) has {kind}"):
            assign()
        assert v.numpy().tolist() == [1.0, 2.0]
        v.assign(np.array([3.0, 4.0], np.float32))  # finite values pass
        tl.function(lambda a: v.assign(a * 2.0))(np.array([1.0, 1.0], np.float32))
    assert v.numpy().tolist() == [2.0, 2.0]
    assign()  # without the check, as before
    assert np.isnan(v.numpy()[0]) == np.isnan(bad)


def test_the_profile_shows_variable_assigns_in_graphs_and_eagerly(tmp_path):
    # A traced optimizer step's assigns (the weights and slots) were missing from tl.profile: only the ops
    # computing the values showed, so the profile of a training step did not show that it trained anything.
    w = tl.Variable(np.ones((2, 3)), name="w")
    opt = tl.optimizers.SGD(0.1, momentum=0.9)
    step = tl.function(lambda g: opt.apply([g], [w]))
    step(np.ones((2, 3)))
    with tl.profile() as prof:
        step(np.ones((2, 3)))
        w.assign(np.zeros((2, 3)))
    assigns = [(e.mode, e.input_shapes, e.dtypes) for e in prof.events if e.op_type == "AssignVariable"]
    # graph: the momentum slot, the weight, the step counter; then the eager assign
    assert sorted(assigns[:3]) == sorted(
        [("graph", ((2, 3),), ("float64",)), ("graph", ((2, 3),), ("float64",)), ("graph", ((),), ("int64",))]
    )
    assert assigns[3:] == [("eager", ((2, 3),), ("float64",))]
    prof.export_chrome_trace(tmp_path / "trace.json")
    rows = {(op, mode): calls for op, mode, _, _, calls, _, _ in prof.summary()}
    assert rows[("AssignVariable", "graph")] == 3 and rows[("AssignVariable", "eager")] == 1


@pytest.mark.parametrize("name", ["GaussianNoise", "GaussianDropout"])
@pytest.mark.parametrize("seed", [None, 3])
def test_gaussian_noise_layers_traced_with_an_unknown_batch_draw_what_eager_calls_draw(name, seed):
    # Traced with TensorSpec((None, 4, 3)) in training mode they raised "traced with unknown sizes" (Dropout and
    # AlphaDropout worked).  Reference: the same layer's eager draws for the same seed (the numbers of NumPy's
    # normal(mean, stddev)), and the definitions x + N(0, s) and x * N(1, sqrt(rate / (1 - rate))).
    x = np.random.default_rng(0).uniform(1.0, 2.0, size=(64, 4, 3))

    def make():
        return getattr(tl.nn, name)(0.3, seed=seed)

    traced_layer, eager_layer = make(), make()
    f = tl.function(lambda t: traced_layer(t, training=True), input_signature=[tl.TensorSpec((None, 4, 3), tl.float64)])
    for n in (64, 5):
        tl.random.seed(11)
        got = f(x[:n]).numpy()
        tl.random.seed(11)
        np.testing.assert_allclose(got, eager_layer(x[:n], training=True).numpy(), rtol=1e-12)
    tl.random.seed(11)
    noise = f(x).numpy() - x if name == "GaussianNoise" else f(x).numpy() / x - 1.0
    std = 0.3 if name == "GaussianNoise" else np.sqrt(0.3 / 0.7)
    assert abs(noise.mean()) < 4 * std / np.sqrt(noise.size)
    np.testing.assert_allclose(noise.std(), std, rtol=0.05)


@pytest.mark.parametrize("traced", [False, True])
def test_a_frozen_batch_norm_runs_in_inference_mode_as_keras(traced):
    # model[1].trainable = False (Keras' way to fine-tune with frozen normalization) still normalised with the
    # batch's statistics and moved the running ones at every training step.  Keras' BatchNormalization runs in
    # inference mode when frozen, whatever training says.  Reference: NumPy with the running statistics.
    x = np.random.default_rng(0).normal(2.0, 3.0, size=(8, 4))
    model = tl.nn.Sequential(tl.nn.Dense(4, 4, seed=0, dtype=tl.float64), tl.nn.BatchNorm(4, dtype=tl.float64))
    model[1].running_mean.assign(np.full(4, 0.5))
    model[1].running_var.assign(np.full(4, 4.0))
    call = tl.function(lambda x: model(x, training=True)) if traced else (lambda x: model(x, training=True))
    h = x @ model[0].kernel.numpy() + model[0].bias.numpy()
    model.trainable = False
    for _ in range(2):
        np.testing.assert_allclose(call(x).numpy(), (h - 0.5) / np.sqrt(4.0 + 1e-5), rtol=1e-12)
    assert model[1].running_mean.numpy().tolist() == [0.5] * 4
    model.trainable = True  # unfrozen: batch statistics again, and the running ones move
    np.testing.assert_allclose(call(x).numpy(), (h - h.mean(0)) / np.sqrt(h.var(0) + 1e-5), rtol=1e-10)
    np.testing.assert_allclose(model[1].running_mean.numpy(), 0.9 * 0.5 + 0.1 * h.mean(0), rtol=1e-12)


def test_a_traced_forward_retraces_for_the_mode_of_the_call_around_it():
    # A Module whose forward is a tl.function traced its graph in the mode of the first call
    # (model(x, training=False): no dropout) and reused it for model(x, training=True).
    class Block(tl.Module):
        def __init__(self):
            super().__init__()
            self.drop = tl.nn.Dropout(0.5)

        @tl.function
        def forward(self, x):
            return self.drop(x)

    block, x = Block(), np.ones(1000)
    for training in (False, True, False, True):
        y = block(x, training=training).numpy()
        assert (y == 0).any() == training
        np.testing.assert_array_equal(y[y != 0], 2.0 if training else 1.0)


@pytest.mark.parametrize("kind", ["SimpleRNN", "LSTM", "GRU"])
def test_a_seeded_bidirectional_layer_is_reproducible_in_both_halves(kind):
    # The backward half of Bidirectional(LSTM(..., seed=1)) was made with no seed: its weights (and dropout masks)
    # came from the global stream, so two models built from the same seeded code differed.
    make = getattr(tl.nn, kind)
    x = np.random.default_rng(0).normal(size=(3, 5, 2))
    tl.random.seed(1)
    a = tl.nn.Bidirectional(make(2, 4, seed=1, dropout=0.3, return_sequences=True, dtype=tl.float64))
    tl.random.seed(2)
    b = tl.nn.Bidirectional(make(2, 4, seed=1, dropout=0.3, return_sequences=True, dtype=tl.float64))
    for name in ("kernel", "recurrent_kernel"):
        np.testing.assert_array_equal(getattr(a.backward_layer, name).numpy(), getattr(b.backward_layer, name).numpy())
        assert not np.array_equal(getattr(a.backward_layer, name).numpy(), getattr(a.forward_layer, name).numpy())
    np.testing.assert_array_equal(a(x, training=True).numpy(), b(x, training=True).numpy())


@pytest.mark.parametrize("kind", ["RNN", "LSTM", "GRU"])
def test_a_torch_style_recurrent_layers_seed_seeds_its_dropout_between_layers(kind):
    # tl.nn.torch.LSTM(..., num_layers=2, dropout=0.5, seed=1): the seed drew the weights, the dropout masks came
    # from the global stream (as the Keras-style layers' did).
    make = getattr(tl.nn.torch, kind)
    x = np.random.default_rng(0).normal(size=(5, 3, 2))
    a, b = (make(2, 4, num_layers=2, dropout=0.5, seed=1, dtype=tl.float64) for _ in range(2))
    tl.random.seed(1)
    first = a(x)[0].numpy()
    tl.random.seed(2)
    np.testing.assert_array_equal(b(x)[0].numpy(), first)
    assert not np.array_equal(a(x)[0].numpy(), first)  # a new mask per call
    a.eval()
    assert not np.array_equal(a(x)[0].numpy(), first)

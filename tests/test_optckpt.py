"""Optimizers, schedules and checkpoints attacked on resuming exactly.

A run saved after N steps and restored into new objects (optimizers built with their defaults, models with other
seeds) must continue bit for bit as the uninterrupted run of N + M steps, eagerly and traced; the references are
that uninterrupted run, NumPy formulas of the update rules, and ``torch.optim`` where it is installed.
"""

import numpy as np
import pytest

import tensorlib as tl

O = tl.optimizers


def _grads(w, step):
    """The gradient of ``sum((w - target_t) ** 2 * scale)`` at step ``t``: it changes with the step."""
    target = np.sin(np.arange(w.size).reshape(w.shape) + step)
    return 2.0 * (w.numpy() - target) * np.linspace(0.5, 2.0, w.size).reshape(w.shape)


# Every optimizer with each of its flags on and off, and numbers away from the defaults.
_SETTINGS = [
    ("SGD", dict(learning_rate=0.1, momentum=0.9, nesterov=True, weight_decay=0.01)),
    ("SGD", dict(learning_rate=0.1, momentum=0.5, dampening=0.3, maximize=True)),
    ("SGD", dict(learning_rate=0.1)),
    ("Adam", dict(learning_rate=0.05, beta_1=0.8, beta_2=0.95, epsilon=1e-3, amsgrad=True)),
    ("Adam", dict(learning_rate=0.05, weight_decay=0.1, maximize=True)),
    ("AdamW", dict(learning_rate=0.05, beta_2=0.9, weight_decay=0.1, amsgrad=True, maximize=True)),
    ("RMSprop", dict(learning_rate=0.02, rho=0.8, momentum=0.5, centered=True)),
    ("RMSprop", dict(learning_rate=0.02, centered=True, weight_decay=0.1)),
    ("RMSprop", dict(learning_rate=0.02, momentum=0.3, maximize=True)),
    ("Adagrad", dict(learning_rate=0.1, lr_decay=0.01, initial_accumulator_value=0.5, maximize=True)),
    ("Adamax", dict(learning_rate=0.05, beta_1=0.7, weight_decay=0.1)),
    ("NAdam", dict(learning_rate=0.05, momentum_decay=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    ("NAdam", dict(learning_rate=0.05, weight_decay=0.1, maximize=True)),
    ("RAdam", dict(learning_rate=0.05, beta_2=0.9, weight_decay=0.1, decoupled_weight_decay=True)),
    ("RAdam", dict(learning_rate=0.05, beta_2=0.9, weight_decay=0.1)),
    ("Adadelta", dict(learning_rate=0.5, rho=0.8, weight_decay=0.1, maximize=True)),
    ("Lion", dict(learning_rate=0.01, beta_1=0.8, weight_decay=0.1, maximize=True)),
]


def _run(opt, w, steps, traced):
    step = tl.function(lambda g: opt.apply([g], [w])) if traced else (lambda g: opt.apply([g], [w]))
    out = []
    for t in steps:
        step(tl.tensor(_grads(w, t)))
        out.append(w.numpy().copy())
    return out


@pytest.mark.parametrize("name, settings", _SETTINGS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(_SETTINGS)])
@pytest.mark.parametrize("traced", [False, True], ids=["eager", "traced"])
@pytest.mark.parametrize("how", ["file", "state_dict"])
def test_a_default_optimizer_restored_continues_as_the_uninterrupted_run(name, settings, traced, how, tmp_path):
    # The flags (amsgrad, nesterov, centered, decoupled_weight_decay, maximize) were not saved: restored into the
    # optimizer's defaults, an Adam(amsgrad=True) resumed as plain Adam, an RMSprop(centered=True) uncentered, and
    # a momentum slot in the file was refused by SGD() (momentum=0).  torch.optim's load_state_dict restores every
    # param group entry.  Reference: the uninterrupted run, bit for bit.
    make = getattr(O, name)
    start = np.random.default_rng(0).normal(size=(2, 3))
    uninterrupted = _run(make(**settings), tl.Variable(start.copy()), range(7), traced)
    w, opt = tl.Variable(start.copy()), make(**settings)
    first = _run(opt, w, range(3), traced)
    fresh, w = make(), tl.Variable(np.zeros((2, 3)))
    if how == "file":
        tl.save_variables(tmp_path / "run.safetensors", {"opt": opt, "w": tl.Variable(first[-1])})
        tl.load_variables(tmp_path / "run.safetensors", {"opt": fresh, "w": w})
    else:
        fresh.load_state_dict(opt.state_dict())
        w.assign(first[-1])
    for k, v in settings.items():
        assert getattr(fresh, k) == v, k
    resumed = first + _run(fresh, w, range(3, 7), traced)
    np.testing.assert_array_equal(resumed, uninterrupted)


@pytest.mark.parametrize("amsgrad_saved", [False, True])
def test_a_built_optimizer_takes_the_files_flags_and_their_slots(amsgrad_saved, tmp_path):
    # A built optimizer (Keras' build, slots made) whose flags differ from the file's: the file's flags and slots
    # win, as in torch.optim; its own v_max, unused under the file's flags, is no missing name.
    start = np.random.default_rng(1).normal(size=(2, 3))
    settings = dict(learning_rate=0.05, beta_2=0.9, amsgrad=amsgrad_saved)
    uninterrupted = _run(O.Adam(**settings), tl.Variable(start.copy()), range(6), False)
    w, opt = tl.Variable(start.copy()), O.Adam(**settings)
    first = _run(opt, w, range(3), False)
    tl.save_variables(tmp_path / "a.safetensors", {"opt": opt})
    fresh = O.Adam(amsgrad=not amsgrad_saved)
    fresh.build([w])
    tl.load_variables(tmp_path / "a.safetensors", {"opt": fresh})
    assert fresh.amsgrad is amsgrad_saved
    np.testing.assert_array_equal(first + _run(fresh, w, range(3, 6), False), uninterrupted)


@pytest.mark.parametrize("name, settings", _SETTINGS[:14], ids=[f"{n}-{i}" for i, (n, _) in enumerate(_SETTINGS[:14])])
def test_maximize_ascends_as_the_negated_gradient_descends(name, settings):
    # maximize=True (torch.optim's) steps as the same optimizer given -g: weight decay still pulls w to 0.
    settings = dict(settings, maximize=True)
    make = getattr(O, name)
    a, b = tl.Variable(np.linspace(-1.0, 1.0, 6)), tl.Variable(np.linspace(-1.0, 1.0, 6))
    up, down = make(**settings), make(**dict(settings, maximize=False))
    for t in range(5):
        g = np.cos(np.arange(6.0) * (t + 1)) * 3.0
        up.apply([tl.tensor(g)], [a])
        down.apply([tl.tensor(-g)], [b])
    np.testing.assert_array_equal(a.numpy(), b.numpy())


_TORCH = {
    "SGD": ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.1)),
    "Adam": ("Adam", dict(lr=0.05, weight_decay=0.1, amsgrad=True)),
    "AdamW": ("AdamW", dict(lr=0.05, weight_decay=0.1)),
    "RMSprop": ("RMSprop", dict(lr=0.01, momentum=0.5, centered=True, weight_decay=0.1)),
    "Adagrad": ("Adagrad", dict(lr=0.1, lr_decay=0.05, weight_decay=0.1)),
    "Adamax": ("Adamax", dict(lr=0.05, weight_decay=0.1)),
    "NAdam": ("NAdam", dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True)),
    "RAdam": ("RAdam", dict(lr=0.05, weight_decay=0.1)),
    "Adadelta": ("Adadelta", dict(lr=0.5, weight_decay=0.1)),
}
_OURS = {"lr": "learning_rate", "eps": "epsilon"}


@pytest.mark.parametrize("name", sorted(_TORCH))
def test_maximize_matches_torch_optim(name):
    torch = pytest.importorskip("torch")
    kind, kwargs = _TORCH[name]
    ours = getattr(O, name)(maximize=True, **{_OURS.get(k, k): v for k, v in kwargs.items()})
    p = torch.tensor(np.linspace(-1.0, 1.0, 6), requires_grad=True)
    theirs = getattr(torch.optim, kind)([p], maximize=True, **kwargs)
    w = tl.Variable(np.linspace(-1.0, 1.0, 6))
    default = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)  # torch's NAdam keeps its momentum product in the default dtype
    try:
        for t in range(8):
            g = np.cos(np.arange(6.0) * (t + 1)) * 3.0
            ours.apply([tl.tensor(g)], [w])
            p.grad = torch.tensor(g)
            theirs.step()
    finally:
        torch.set_default_dtype(default)
    np.testing.assert_allclose(w.numpy(), p.detach().numpy(), rtol=1e-12, atol=1e-14)


def test_a_flag_must_be_a_bool():
    # amsgrad="False" was truthy: the flag was on.  0 and 1 are taken as bools.
    with pytest.raises(TypeError, match="Adam: amsgrad must be a bool, got str 'False'"):
        O.Adam(amsgrad="False")
    with pytest.raises(TypeError, match="SGD: maximize must be a bool"):
        O.SGD(maximize=None)
    assert O.RMSprop(centered=1).centered is True


def test_a_state_dict_is_saved_and_loaded_back(tmp_path):
    # save_variables(model.state_dict()) was refused ("key '0.kernel' under '<root>' contains '.'", then "entry is a
    # ndarray"): PyTorch's habit, torch.save(model.state_dict()) and model.load_state_dict(torch.load(path)).
    # Reference: the arrays themselves, and a dict of name -> Variable/Tensor/array mixed.
    model = tl.nn.Sequential(tl.nn.Dense(2, 3, seed=0), tl.nn.Dense(3, 1, seed=1, dtype="float64"))
    opt = O.Adam(0.1, amsgrad=True)
    opt.apply([tl.tensor(np.ones((2, 3), np.float32))], [model[0].kernel])
    path = tmp_path / "state.safetensors"
    state = {**model.state_dict(), **{f"opt.{k}": v for k, v in opt.state_dict().items()}}
    tl.save_variables(path, state)
    loaded = tl.load_variables(path)
    assert sorted(loaded) == sorted(state)
    for name, a in state.items():
        assert loaded[name].dtype == a.dtype and np.array_equal(loaded[name].numpy(), a), name
    fresh = tl.nn.Sequential(tl.nn.Dense(2, 3, seed=5), tl.nn.Dense(3, 1, seed=6, dtype="float64"))
    assert fresh.load_state_dict({k: v for k, v in loaded.items() if not k.startswith("opt.")}) == ([], [])
    np.testing.assert_array_equal(fresh[1].kernel.numpy(), model[1].kernel.numpy())
    mixed = {
        "w": tl.Variable(np.arange(3.0)),
        "t": tl.tensor([1, 2]),
        "a.b": np.float32(2.5),
        "c": np.eye(2, dtype="c16"),
    }
    tl.save_variables(path, mixed)
    back = tl.load_variables(path)
    assert back["a.b"].dtype == tl.float32 and float(back["a.b"]) == 2.5
    np.testing.assert_array_equal(back["c"].numpy(), np.eye(2))
    assert back["c"].dtype == tl.complex128 and back["t"].numpy().tolist() == [1, 2]


def test_a_state_dict_entry_tensorlib_cannot_hold_is_refused_by_name(tmp_path):
    with pytest.raises(TypeError, match=r"save_variables: entry 'x.y' \(shape \(2,\)\): .*uint64 is not supported"):
        tl.save_variables(tmp_path / "s.safetensors", {"x.y": np.zeros(2, np.uint64)})
    with pytest.raises(ValueError, match="two entries are both named 'a.b'"):
        tl.save_variables(tmp_path / "s.safetensors", {"a.b": np.zeros(2), "a": {"b": np.ones(2)}})
    assert not (tmp_path / "s.safetensors").exists()


def _noisy_model(seed):
    return tl.nn.Sequential(
        tl.nn.Dense(4, 6, seed=seed, dtype="float64"),
        tl.nn.Dropout(0.5, seed=11),
        tl.nn.GaussianNoise(0.3, seed=12),
        tl.nn.AlphaDropout(0.2, seed=13),
        tl.nn.Dense(6, 1, seed=seed + 1, dtype="float64"),
    )


def _train(model, opt, steps, traced):
    def step(x, y):
        with tl.GradientTape() as tape:
            loss = tl.mean((model(x) - y) ** 2)
        opt.apply(tape.gradient(loss, model.trainable_variables), model)
        return loss

    step = tl.function(step) if traced else step
    data = np.random.default_rng(3)
    xs = [(data.normal(size=(5, 4)), data.normal(size=(5, 1))) for _ in range(6)]
    return [float(step(*xs[t])) for t in steps]


@pytest.mark.parametrize("traced", [False, True], ids=["eager", "traced"])
@pytest.mark.parametrize("how", ["file", "state_dict"])
def test_seeded_noise_layers_resume_their_stream(traced, how, tmp_path):
    # A seeded Dropout/GaussianNoise/AlphaDropout counted its calls in a Variable outside variables and
    # checkpoints: restored into new layers, the masks restarted from the first call's, and the resumed run's
    # losses differed from the uninterrupted run's from the first resumed step.  Reference: the uninterrupted run.
    uninterrupted = _train(_noisy_model(0), O.Adam(0.05), range(6), traced)
    model, opt = _noisy_model(0), O.Adam(0.05)
    first = _train(model, opt, range(3), traced)
    assert int(model[1].seed_state.numpy()) == 3 and "seed_state" not in model.trainable_variables.get("1", {})
    fresh, fresh_opt = _noisy_model(7), O.Adam()
    if how == "file":
        tl.save_variables(tmp_path / "run.safetensors", {"model": model, "opt": opt})
        tl.load_variables(tmp_path / "run.safetensors", {"model": fresh, "opt": fresh_opt})
    else:
        fresh.load_state_dict(model.state_dict())
        fresh_opt.load_state_dict(opt.state_dict())
    assert first + _train(fresh, fresh_opt, range(3, 6), traced) == uninterrupted


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
def test_a_recurrent_layers_dropout_stream_is_saved_only_where_it_drops(kind, tmp_path):
    make = getattr(tl.nn, kind)
    x = tl.tensor(np.random.default_rng(0).normal(size=(2, 3, 2)))
    layer = make(2, 4, seed=1, dropout=0.5, recurrent_dropout=0.3, dtype=tl.float64)
    layer(x)
    tl.save_variables(tmp_path / "rnn.safetensors", layer)
    want = layer(x).numpy()
    fresh = make(2, 4, seed=1, dropout=0.5, recurrent_dropout=0.3, dtype=tl.float64)
    fresh.kernel.assign(np.zeros(fresh.kernel.shape))
    tl.load_variables(tmp_path / "rnn.safetensors", fresh)
    np.testing.assert_array_equal(fresh(x).numpy(), want)
    assert "seed_state" not in make(2, 4, seed=1).variables  # no dropout: no stream to save
    assert "seed_state" not in tl.nn.Dropout(0.5).variables  # unseeded: the global stream, tl.random.seed's


def test_a_file_without_the_stream_position_still_loads(tmp_path):
    # Files written before seed_state was saved load strictly; the stream keeps its position.
    model = _noisy_model(0)
    state = {k: v for k, v in model.state_dict().items() if not k.endswith("seed_state")}
    assert model.load_state_dict(state) == ([], [])


def _plateau_reference(metrics, lr, mode, factor, patience, threshold, threshold_mode, cooldown, min_lr, eps):
    """PyTorch's ReduceLROnPlateau rules written out: the rate before each call."""
    best, bad, cool, rates = (np.inf if mode == "min" else -np.inf), 0, 0, []
    for m in metrics:
        rates.append(lr)
        if mode == "min":
            better = m < (best * (1 - threshold) if threshold_mode == "rel" else best - threshold)
        else:
            better = m > (best * (1 + threshold) if threshold_mode == "rel" else best + threshold)
        best, bad = (m, 0) if better else (best, bad + 1)
        if cool > 0:
            cool, bad = cool - 1, 0
        if bad > patience:
            new = max(lr * factor, min_lr)
            lr = new if lr - new > eps else lr
            cool, bad = cooldown, 0
    return rates


_PLATEAUS = [
    dict(mode="min", factor=0.5, patience=2, threshold=1e-2, threshold_mode="rel", cooldown=1, min_lr=0.01, eps=1e-8),
    dict(mode="max", factor=0.1, patience=0, threshold=0.05, threshold_mode="abs", cooldown=0, min_lr=0.0, eps=1e-8),
    dict(mode="min", factor=0.3, patience=1, threshold=0.0, threshold_mode="abs", cooldown=2, min_lr=0.05, eps=0.02),
]


def _metrics():
    rng = np.random.default_rng(5)
    values = list(np.cumsum(rng.normal(size=40)) * 0.3 + 5.0)
    values[7] = float("nan")  # never better
    return values


@pytest.mark.parametrize("kwargs", _PLATEAUS, ids=["min-rel", "max-abs", "eps-min_lr"])
def test_reduce_lr_on_plateau_follows_torchs_rules_and_resumes(kwargs, tmp_path):
    metrics = _metrics()
    want = _plateau_reference(metrics, 1.0, **kwargs)
    opt = O.SGD(1.0)
    plateau = O.ReduceLROnPlateau(opt, **kwargs)
    got = []
    for m in metrics[:20]:
        got.append(opt.learning_rate)
        plateau.step(tl.tensor(m) if len(got) % 2 else m)
    tl.save_variables(tmp_path / "p.safetensors", {"opt": opt, "plateau": plateau})
    opt = O.SGD(0.5)
    plateau = O.ReduceLROnPlateau(opt, **kwargs)
    tl.load_variables(tmp_path / "p.safetensors", {"opt": opt, "plateau": plateau})
    for m in metrics[20:]:
        got.append(opt.learning_rate)
        plateau.step(m)
    assert got == want and len(set(want)) > 1


@pytest.mark.parametrize("kwargs", _PLATEAUS, ids=["min-rel", "max-abs", "eps-min_lr"])
def test_reduce_lr_on_plateau_matches_torch(kwargs):
    torch = pytest.importorskip("torch")
    p = torch.zeros(1, requires_grad=True)
    theirs = torch.optim.SGD([p], lr=1.0)
    sched = torch.optim.lr_scheduler.ReduceLROnPlateau(theirs, **kwargs)
    opt = O.SGD(1.0)
    plateau = O.ReduceLROnPlateau(opt, **kwargs)
    for m in _metrics():
        assert opt.learning_rate == theirs.param_groups[0]["lr"]
        sched.step(m)
        plateau.step(m)


def test_reduce_lr_on_plateau_drives_a_traced_step_and_refuses_bad_use():
    w, opt = tl.Variable([1.0]), O.SGD(1.0)
    step = tl.function(lambda: opt.apply([tl.tensor([1.0])], [w]))
    plateau = O.ReduceLROnPlateau(opt, factor=0.5, patience=0)
    for loss in (1.0, 1.0, 1.0):
        step()
        plateau.step(loss)
    assert opt.learning_rate == 0.25 and step.trace_count == 1
    assert w.numpy().tolist() == [1.0 - 1.0 - 1.0 - 0.5]
    with pytest.raises(TypeError, match="ReduceLROnPlateau: optimizer must be a tl.optimizers.Optimizer"):
        O.ReduceLROnPlateau(w)
    with pytest.raises(ValueError, match=r"ReduceLROnPlateau: factor must be in \[0, 1\), got 1.5"):
        O.ReduceLROnPlateau(opt, factor=1.5)
    with pytest.raises(TypeError, match="ReduceLROnPlateau.step: the optimizer's learning rate is a schedule"):
        O.ReduceLROnPlateau(O.SGD(O.StepDecay(1.0, 2)), patience=0).step(1.0)
    with pytest.raises(RuntimeError, match="ReduceLROnPlateau.step: called while tl.function traces"):
        tl.function(lambda x: plateau.step(x))(tl.tensor(1.0))


def test_functional_call_strict_needs_no_stream_position():
    # With seed_state in variables, functional_call(strict=True) of a seeded Dropout model demanded a value for
    # '1.seed_state' (a KeyError), as it does for weights; the stream's position is no value the call depends on.
    model = tl.nn.Sequential(tl.nn.Dense(2, 3, seed=0), tl.nn.Dropout(0.5, seed=1))
    kernel = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    values = {"0": {"kernel": kernel, "bias": np.zeros(3, np.float32)}}
    got = tl.functional_call(model, values, (np.ones((1, 2), np.float32),), strict=True).numpy()
    kept = got != 0
    np.testing.assert_allclose(got[kept], (np.ones((1, 2)) @ kernel)[kept] * 2.0)

"""Adversarial tests of the newest optimizers, schedules and state dicts (area "optnewadv").

Attacks: schedules at their boundary steps (SGDR's restarts exactly where a period ends), optimizer state
dicts loaded into optimizers of another kind or variant, and whatever else a TF 2 / JAX / PyTorch user
would try on Adamax, NAdam, RAdam, Adadelta, Lion, PolynomialDecay, InverseTimeDecay,
CosineDecayRestarts, OneCycle and ``state_dict``/``load_state_dict``.  References: the published
update rules and schedules written here in NumPy / exact rational arithmetic (these run in CI), and
``torch.optim`` / ``torch.optim.lr_scheduler`` and Keras where installed.
"""

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tensorlib as tl

O = tl.optimizers


# ---------------------------------------------------------------- CosineDecayRestarts at its restarts
def _sgdr(t: int, initial: float, first: int, t_mul: float, m_mul: float, alpha: float) -> float:
    """SGDR by walking the periods in exact rational arithmetic: no rounding decides where a period ends."""
    start, length, scale, mul = Fraction(0), Fraction(first), 1.0, Fraction(t_mul)
    while t >= start + length:
        start, length, scale = start + length, length * mul, scale * m_mul
    cosine = 0.5 * scale * (1.0 + math.cos(math.pi * float((t - start) / length)))
    return initial * ((1.0 - alpha) * cosine + alpha)


@pytest.mark.parametrize(
    "first, t_mul, m_mul, alpha, steps",
    [(3, 3.0, 0.9, 0.0, 1100), (1, 2.0, 0.5, 0.1, 1100), (4, 1.5, 0.8, 0.0, 400), (5, 4.0, 1.0, 0.2, 1800)],
)
def test_cosine_decay_restarts_restarts_exactly_where_a_period_ends(first, t_mul, m_mul, alpha, steps):
    # The restarts before step t came from floor(log(1 + t / first * (t_mul - 1)) / log(t_mul)), rounded: at
    # step 363 of first=3, t_mul=3 (log(243) / log(3) = 4.999...) the rate was 0.0, the end of the previous
    # period, where the restart's 0.59 (= 0.9^5) is due (Keras and PyTorch's incremental stepping say 0.59).
    s = O.CosineDecayRestarts(1.0, first, t_mul=t_mul, m_mul=m_mul, alpha=alpha)
    t = np.arange(steps)
    got = s(tl.tensor(t.astype(np.float64))).numpy()
    want = np.array([_sgdr(int(i), 1.0, first, t_mul, m_mul, alpha) for i in t])
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)
    if (first, t_mul) == (3, 3.0):
        assert float(s(363)) == pytest.approx(0.9**5, rel=1e-12)


def test_cosine_decay_restarts_matches_torch_warm_restarts_stepped_one_by_one():
    torch = pytest.importorskip("torch")
    p = torch.zeros(1, requires_grad=True)
    opt = torch.optim.SGD([p], lr=1.0)
    theirs = torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=3, T_mult=3, eta_min=0.1)
    ours = O.CosineDecayRestarts(1.0, 3, t_mul=3.0, alpha=0.1)
    for t in range(400):
        assert float(ours(t)) == pytest.approx(opt.param_groups[0]["lr"], rel=1e-12), t
        opt.step()
        theirs.step()


def test_cosine_decay_restarts_refuses_shrinking_periods():
    # t_mul < 1: the periods add up to first / (1 - t_mul) steps, and past them the rate was NaN (a NaN step).
    with pytest.raises(ValueError, match=r"CosineDecayRestarts: t_mul must be >= 1 .*t_mul=0.5"):
        O.CosineDecayRestarts(1.0, 40, t_mul=0.5)


# ---------------------------------------------------------------- optimizer state into another optimizer
def _adam_state(**kwargs) -> dict:
    w = tl.Variable(np.array([1.0, -2.0, 3.0]))
    opt = O.Adam(0.1, **kwargs)
    for g in ([1.0, 2.0, -3.0], [0.5, -1.0, 2.0]):
        opt.apply([tl.tensor(np.array(g))], [w])
    return tl.checkpoint.state_dict(opt)


@pytest.mark.parametrize(
    "make, slot",
    [(lambda: O.NAdam(0.1), "mu_product"), (lambda: O.Adam(0.1, amsgrad=True), "v_max")],
    ids=["adam_into_nadam", "adam_into_amsgrad"],
)
def test_a_state_without_some_of_the_optimizers_slots_is_refused_or_reported(make, slot):
    # An optimizer that has taken no step took the Adam file's m, v and step and started NAdam's mu_product
    # (or amsgrad's v_max) from its initial value beside them, silently: torch.optim fails on such a state at
    # its first step (KeyError), and a built optimizer already refused it as a missing name.  (A file that holds
    # the flag amsgrad=False restores it, as torch.optim's load_state_dict does: this one is from before flags were
    # saved.)
    state = {k: v for k, v in _adam_state().items() if k != "hyperparameters.amsgrad"}
    model = tl.nn.Dense(3, 1, seed=0, dtype="float64")
    kernel = model.kernel.numpy().copy()
    with pytest.raises(ValueError, match=rf"missing from the state: \['opt.slots.0.{slot}'\]"):
        tl.checkpoint.load_state_dict(
            {"model": model, "opt": make()},
            {**{f"model.{k}": np.zeros_like(v) for k, v in model.state_dict().items()}, **_prefixed(state, "opt")},
        )
    np.testing.assert_array_equal(model.kernel.numpy(), kernel)  # all or nothing: the model is untouched
    opt = make()
    missing, extra = tl.checkpoint.load_state_dict(opt, state, strict=False)
    assert (missing, extra) == ([f"slots.0.{slot}"], [])


def _prefixed(state: dict, prefix: str) -> dict:
    return {f"{prefix}.{k}": v for k, v in state.items()}


def test_a_complete_state_still_restores_an_optimizer_that_took_no_step():
    # The refusal above is only for slots the file lacks: a state of the same kind restores all of them and
    # the trajectory continues the saved one (NumPy's Adam written out is the reference).
    state = _adam_state(amsgrad=True)
    opt = O.Adam(0.1, amsgrad=True)
    assert tl.checkpoint.load_state_dict(opt, state) == ([], [])
    w = tl.Variable(np.array([0.25, 0.5, -1.0]))
    g = np.array([2.0, -1.0, 0.5])
    opt.apply([tl.tensor(g)], [w])
    m = 0.9 * state["slots.0.m"] + 0.1 * g
    v = 0.999 * state["slots.0.v"] + 0.001 * g * g
    v_max = np.maximum(state["slots.0.v_max"], v)
    want = np.array([0.25, 0.5, -1.0]) - 0.1 * m / (1 - 0.9**3) / (np.sqrt(v_max / (1 - 0.999**3)) + 1e-8)
    np.testing.assert_allclose(w.numpy(), want, rtol=1e-13)


# ---------------------------------------------------------------- optimizer.state_dict(), PyTorch's methods
NEW_OPTIMIZERS = {
    "adamax": lambda: O.Adamax(O.OneCycle(0.1, 10), weight_decay=0.1),
    "nadam": lambda: O.NAdam(0.05, weight_decay=0.1, decoupled_weight_decay=True),
    "radam": lambda: O.RAdam(O.CosineDecayRestarts(0.1, 2), beta_2=0.9, weight_decay=0.1),
    "adadelta": lambda: O.Adadelta(0.5, weight_decay=0.1),
    "lion": lambda: O.Lion(O.Warmup(O.PolynomialDecay(0.01, 5), 2), weight_decay=0.1),
}


def _mlp(seed: int):
    return tl.nn.Sequential(
        tl.nn.Dense(3, 4, seed=seed, dtype="float64", activation=tl.nn.tanh), tl.nn.Dense(4, 2, seed=seed + 1)
    )


def _step(model, opt) -> None:
    x = tl.tensor(np.linspace(-1.0, 1.0, 12).reshape(4, 3))
    with tl.GradientTape() as tape:
        loss = tl.sum(tl.square(model(x) - 1.0))
    opt.apply(tape.gradient(loss, model.trainable_variables), model)


def _flat(model) -> np.ndarray:
    return np.concatenate([v.numpy().ravel() for v in tl.tree.leaves(model.variables)])


def _train(model, opt, steps: int) -> np.ndarray:
    out = []
    for _ in range(steps):
        _step(model, opt)
        out.append(_flat(model))
    return np.array(out)


@pytest.mark.parametrize("name", sorted(NEW_OPTIMIZERS))
def test_optimizer_state_dict_methods_resume_training_exactly(name):
    # PyTorch's opt.state_dict() / opt.load_state_dict(...) had been an AttributeError (only Modules had them).
    make = NEW_OPTIMIZERS[name]
    model, opt = _mlp(0), make()
    _train(model, opt, 3)
    model_state, opt_state = model.state_dict(), opt.state_dict()
    assert all(isinstance(v, np.ndarray) for v in opt_state.values())
    expected = _train(model, opt, 4)
    fresh_model, fresh_opt = _mlp(5), make()
    assert fresh_model.load_state_dict(model_state) == ([], [])
    assert fresh_opt.load_state_dict(opt_state) == ([], [])
    for value in opt_state.values():  # the dict is the caller's: writing to it changes no optimizer state
        value[...] = 0
    np.testing.assert_array_equal(_train(fresh_model, fresh_opt, 4), expected)


def test_optimizer_load_state_dict_refuses_a_misfit_and_changes_nothing():
    model, opt = _mlp(0), O.NAdam(0.1)
    _train(model, opt, 2)
    before = opt.state_dict()
    bad = {**before, "slots.0/kernel.m": np.zeros((4, 3))}
    with pytest.raises(ValueError, match=r"load_state_dict: .*'slots.0/kernel.m' has shape \(4, 3\) float64"):
        opt.load_state_dict(bad)
    for k, v in opt.state_dict().items():
        np.testing.assert_array_equal(v, before[k])


# ---------------------------------------------------------------- NAdam: PyTorch's momentum schedule and Keras'
def _keras_nadam(w, grads, lr, b1=0.9, b2=0.999, eps=1e-7):
    """Keras 3's ``Nadam.update_step`` transcribed: ``u_t = b1 (1 - 0.5 * 0.96^t)``, a running product of them."""
    m, v, product = np.zeros_like(w), np.zeros_like(w), 1.0
    out = []
    for t, g in enumerate(grads, 1):
        u_t, u_next = b1 * (1 - 0.5 * 0.96**t), b1 * (1 - 0.5 * 0.96 ** (t + 1))
        product *= u_t
        m = m + (g - m) * (1 - b1)
        v = v + (g * g - v) * (1 - b2)
        m_hat = u_next * m / (1 - product * u_next) + (1 - u_t) * g / (1 - product)
        w = w - m_hat * lr / (np.sqrt(v / (1 - b2**t)) + eps)
        out.append(w)
    return np.array(out)


def _nadam_trajectory(opt, w0, grads) -> np.ndarray:
    w = tl.Variable(w0.copy())
    out = []
    for g in grads:
        opt.apply([tl.tensor(g)], [w])
        out.append(w.numpy().copy())
    return np.array(out)


def test_nadam_with_momentum_decay_one_is_keras_nadam():
    # The documented convention is PyTorch's (momentum_decay=4e-3, 0.96^(t/250)); Keras' Nadam is 0.96^t, i.e.
    # momentum_decay=1.0: with it every step is Keras' formula, with the default they are far apart.
    rng = np.random.default_rng(3)
    w0, grads = rng.standard_normal(5), [rng.standard_normal(5) for _ in range(12)]
    keras_form = _keras_nadam(w0, grads, 0.5)
    ours = _nadam_trajectory(O.NAdam(0.5, epsilon=1e-7, momentum_decay=1.0), w0, grads)
    np.testing.assert_allclose(ours, keras_form, rtol=1e-12)
    default = _nadam_trajectory(O.NAdam(0.5, epsilon=1e-7), w0, grads)
    assert np.max(np.abs(default - keras_form)) > 0.1
    keras = pytest.importorskip("keras")
    kv, opt = keras.Variable(w0.copy(), dtype="float64"), keras.optimizers.Nadam(0.5)
    theirs = []
    for g in grads:
        opt.apply_gradients([(keras.ops.convert_to_tensor(g, dtype="float64"), kv)])
        theirs.append(np.array(kv.numpy()))
    np.testing.assert_allclose(ours, theirs, rtol=1e-5)  # Keras keeps its product of u_t in float32


# ---------------------------------------------------------------- schedules that would give a negative rate
@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: O.StepDecay(0.1, 1, gamma=-0.5), r"StepDecay: gamma must be >= 0, got -0.5"),
        (lambda: O.CosineDecay(-0.1, 10), r"CosineDecay: initial must be >= 0, got -0.1"),
        (lambda: O.CosineDecay(0.1, 10, alpha=-0.1), r"CosineDecay: alpha must be >= 0"),
        (lambda: O.Warmup(-0.1, 5), r"Warmup: after must be >= 0"),
        (lambda: O.ExponentialDecay(-0.1, 5, 0.5), r"ExponentialDecay: initial must be >= 0"),
        (lambda: O.PiecewiseConstant([3], [0.1, -0.01]), r"PiecewiseConstant: values\[1\] must be >= 0"),
        (lambda: O.PolynomialDecay(0.1, 4, end=-0.1), r"PolynomialDecay: end must be >= 0, got -0.1"),
        (lambda: O.InverseTimeDecay(-0.1, 1, 0.5), r"InverseTimeDecay: initial must be >= 0"),
        (lambda: O.CosineDecayRestarts(0.1, 4, alpha=-0.5), r"CosineDecayRestarts: alpha must be >= 0"),
        (lambda: O.OneCycle(-1.0, 10), r"OneCycle: max_lr must be >= 0, got -1.0"),
    ],
)
def test_a_schedule_that_would_give_a_negative_rate_is_refused(make, message):
    # Each gave negative rates (StepDecay's -0.05 at step 1, OneCycle's -0.95 at step 3, ...) and SGD climbed
    # the loss, silently: w = 1 + 0.1 * 2 after one step of InverseTimeDecay(-0.1, ...), where SGD(-0.1) is
    # refused ("learning_rate must be >= 0"), as torch.optim refuses a negative rate.
    with pytest.raises(ValueError, match=message):
        make()


def test_a_zero_rate_schedule_is_still_a_schedule():
    w = tl.Variable(np.array([1.0, -2.0]))
    O.SGD(O.PolynomialDecay(0.0, 4, end=0.0)).apply([tl.tensor(np.array([3.0, 4.0]))], [w])
    np.testing.assert_array_equal(w.numpy(), [1.0, -2.0])


# ---------------------------------------------------------------- enable_check_numerics through a step
@pytest.mark.parametrize(
    "make",
    [
        lambda: O.RAdam(0.1, beta_2=0.6),  # rho_inf = 4: the rectifier divided by rho_inf - 4 = 0
        lambda: O.RAdam(0.1, beta_2=0.5),  # rho_inf = 3: its square root was of a negative number
        lambda: O.Adam(0.1, global_clipnorm=1.0),  # a NaN constant, picked away by a where
        lambda: O.NAdam(0.1, global_clipnorm=0.5),
    ],
    ids=["radam_b2_0.6", "radam_b2_0.5", "adam_global_clipnorm", "nadam_global_clipnorm"],
)
def test_check_numerics_passes_a_step_with_nothing_wrong(make):
    # Each raised NumericsError ("Div produced Inf", "Sqrt produced NaN", "Cast produced NaN") on finite
    # gradients and finite results: branches a where never picks held inf/NaN.  The trajectory is the NumPy one.
    grads = [np.zeros(3), np.array([1.0, 0.0, 2.0]), np.array([-3.0, 0.5, 1.0])] * 3
    w, opt = tl.Variable(np.ones(3)), make()
    with tl.debugging.enable_check_numerics():
        for g in grads:
            opt.apply([tl.tensor(g)], [w])
    np.testing.assert_allclose(w.numpy(), _numpy_trajectory(opt, np.ones(3), grads), rtol=1e-12)


def _numpy_trajectory(opt, w, grads) -> np.ndarray:
    """Adam / NAdam (PyTorch's form, psi = 4e-3) with global-norm clipping, or RAdam below its threshold
    (beta_2 <= 2/3: rho_t never exceeds 5, so every step is lr * m_hat)."""
    b1, b2, eps, clip = opt.beta_1, opt.beta_2, opt.epsilon, opt.global_clipnorm
    m, v, product = np.zeros_like(w), np.zeros_like(w), 1.0
    for t, g in enumerate(grads, 1):
        if clip is not None:
            g = g * clip / max(np.sqrt(np.sum(g * g)), clip)
        m, v = b1 * m + (1 - b1) * g, b2 * v + (1 - b2) * g * g
        d = np.sqrt(v / (1 - b2**t)) + eps
        if isinstance(opt, O.RAdam):
            w = w - opt.learning_rate * m / (1 - b1**t)
        elif isinstance(opt, O.NAdam):
            mu, mu_next = b1 * (1 - 0.5 * 0.96 ** (t * 4e-3)), b1 * (1 - 0.5 * 0.96 ** ((t + 1) * 4e-3))
            product *= mu
            w = w - opt.learning_rate * ((1 - mu) / (1 - product) * g + mu_next / (1 - product * mu_next) * m) / d
        else:
            w = w - opt.learning_rate * m / (1 - b1**t) / d
    return w


def test_load_state_dict_reports_skipped_names_as_pytorch_names_them():
    # PyTorch's result is a pair with .missing_keys and .unexpected_keys; ours was a bare tuple (AttributeError).
    a, b = tl.nn.Dense(2, 3, seed=0), tl.nn.Dense(2, 3, use_bias=False, seed=1)
    result = b.load_state_dict({**a.state_dict(), "extra": np.zeros(2)}, strict=False)
    assert result == ([], ["bias", "extra"])
    assert (result.missing_keys, result.unexpected_keys) == ([], ["bias", "extra"])
    np.testing.assert_array_equal(b.kernel.numpy(), a.kernel.numpy())
    torch = pytest.importorskip("torch")
    theirs = torch.nn.Linear(2, 3, bias=False).load_state_dict(
        {**torch.nn.Linear(2, 3).state_dict(), "extra": torch.zeros(2)}, strict=False
    )
    assert (theirs.missing_keys, theirs.unexpected_keys) == result


# ---------------------------------------------------------------- hyperparameters set between traced steps
@pytest.mark.parametrize(
    "name, attribute, value, traces",
    [
        ("adamax", "beta_1", 0.5, 1),
        ("nadam", "weight_decay", 0.0, 2),
        ("radam", "epsilon", 1e-3, 1),
        ("adadelta", "rho", 0.5, 1),
        ("lion", "beta_2", 0.5, 1),
        ("nadam", "clipnorm", 0.01, 2),
    ],
)
def test_a_hyperparameter_set_between_traced_steps_is_used(name, attribute, value, traces):
    # The graph of a traced step bakes the optimizer's numbers in: after opt.weight_decay = 0.0 the traced
    # steps still decayed by 0.1 and left the eager trajectory (PyTorch reads a param group's values at every
    # step; setting the learning rate already took effect).  Now a hyperparameter is read from a Variable at
    # every call (no new trace), and a change that picks other ops (weight decay switched off, a clipping
    # argument) retraces once, a value set back reusing its graph.
    trajectories, counts = [], []
    for traced in (False, True):
        model, opt = _mlp(0), NEW_OPTIMIZERS[name]()
        step = tl.function(lambda: _step(model, opt)) if traced else (lambda: _step(model, opt))
        before, rows = getattr(opt, attribute), []
        for set_to in (before, before, value, value, before):
            setattr(opt, attribute, set_to)
            step()
            rows.append(_flat(model))
        trajectories.append(np.array(rows))
        counts.append(getattr(step, "trace_count", None))
    np.testing.assert_array_equal(trajectories[1], trajectories[0])
    assert counts[1] == traces


def test_weight_decay_switched_off_between_traced_steps_matches_numpy():
    w, opt = tl.Variable(np.array([1.0, 2.0])), O.NAdam(0.1, weight_decay=0.5, decoupled_weight_decay=True)
    step = tl.function(lambda: opt.apply([tl.tensor(np.zeros(2))], [w]))
    step()  # zero gradients: only the decay moves w, by 1 - 0.1 * 0.5
    opt.weight_decay = 0.0
    step()
    step()
    np.testing.assert_allclose(w.numpy(), [0.95, 1.9], rtol=1e-15)


# ---------------------------------------------------------------- every argument, drawn, against NumPy
@given(
    name=st.sampled_from(["adamax", "nadam", "radam", "adadelta", "lion"]),
    lr=st.floats(1e-3, 0.5),
    beta_1=st.sampled_from([0.0, 0.5, 0.9]),
    beta_2=st.sampled_from([0.0, 0.5, 0.6, 0.9, 0.999]),
    epsilon=st.sampled_from([1e-8, 1e-3, 0.5]),
    weight_decay=st.sampled_from([0.0, 0.1]),
    decoupled=st.booleans(),
    psi=st.sampled_from([0.0, 4e-3, 1.0]),
    seed=st.integers(0, 2**16),
)
def test_every_argument_follows_the_published_rule(
    name, lr, beta_1, beta_2, epsilon, weight_decay, decoupled, psi, seed
):
    # The NumPy transcriptions of tests/test_optimizers_more.py (PyTorch's documented rules; Keras' for Lion),
    # over the arguments' whole ranges: beta_2 <= 2/3 keeps RAdam unrectified, rho = beta_2 for Adadelta.
    from tests.test_optimizers_more import _adadelta, _adamax, _lion, _nadam, _radam

    rng = np.random.default_rng(seed)
    w0 = rng.standard_normal(6)
    grads = [rng.standard_normal(6) * (rng.random(6) < 0.8) for _ in range(10)]
    make, reference = {
        "adamax": (
            lambda: O.Adamax(lr, beta_1, beta_2, epsilon, weight_decay),
            lambda: _adamax(w0, grads, lr, beta_1, beta_2, epsilon, weight_decay),
        ),
        "nadam": (
            lambda: O.NAdam(lr, beta_1, beta_2, epsilon, weight_decay, psi, decoupled),
            lambda: _nadam(w0, grads, lr, beta_1, beta_2, epsilon, weight_decay, psi, decoupled),
        ),
        "radam": (
            lambda: O.RAdam(lr, beta_1, beta_2, epsilon, weight_decay, decoupled),
            lambda: _radam(w0, grads, lr, beta_1, beta_2, epsilon, weight_decay, decoupled),
        ),
        "adadelta": (
            lambda: O.Adadelta(lr, beta_2, epsilon, weight_decay),
            lambda: _adadelta(w0, grads, lr, beta_2, epsilon, weight_decay),
        ),
        "lion": (
            lambda: O.Lion(lr, beta_1, beta_2, weight_decay),
            lambda: _lion(w0, grads, lr, beta_1, beta_2, weight_decay),
        ),
    }[name]
    w, opt = tl.Variable(w0.copy()), make()
    for g in grads:
        opt.apply([tl.tensor(g)], [w])
    np.testing.assert_allclose(w.numpy(), reference(), rtol=1e-11, atol=1e-12)


# ---------------------------------------------------------------- arguments that add slots, set after a step
def _sgd_momentum_turned_on(grads, lr, at, momentum, dampening):
    """torch.optim.SGD's rule with a param group's momentum set at step ``at``: the buffer starts as g."""
    w, buf = np.array([1.0, 2.0]), None
    for i, g in enumerate(grads):
        if i >= at:
            buf = g.copy() if buf is None else momentum * buf + (1 - dampening) * g
            g = buf
        w = w - lr * g
    return w


@pytest.mark.parametrize("dampening", [0.0, 0.3])
@pytest.mark.parametrize("traced", [False, True])
def test_momentum_set_after_the_first_steps_starts_its_buffer(dampening, traced):
    # SGD(0.1) then opt.momentum = 0.9 (a torch.optim param group's momentum may be set so) failed with a bare
    # KeyError: 'momentum' -- the slots had been fixed at construction.  Now the buffer starts then, as torch's.
    grads = [np.array([1.0, -2.0]), np.array([0.5, 1.0]), np.array([2.0, 0.0]), np.array([-1.0, 1.0])]
    w, opt = tl.Variable(np.array([1.0, 2.0])), O.SGD(0.1)
    step = tl.function(lambda g: opt.apply([g], [w])) if traced else (lambda g: opt.apply([g], [w]))
    for i, g in enumerate(grads):
        if i == 2:
            opt.momentum, opt.dampening = 0.9, dampening
        step(tl.tensor(g))
    np.testing.assert_allclose(w.numpy(), _sgd_momentum_turned_on(grads, 0.1, 2, 0.9, dampening), rtol=1e-15)
    torch = pytest.importorskip("torch")
    p = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    theirs = torch.optim.SGD([p], lr=0.1)
    for i, g in enumerate(grads):
        if i == 2:
            theirs.param_groups[0].update(momentum=0.9, dampening=dampening)
        p.grad = torch.tensor(g)
        theirs.step()
    np.testing.assert_allclose(w.numpy(), p.detach().numpy(), rtol=1e-15)


def test_dampening_set_after_momentum_steps_damps_the_running_buffer():
    # Its step counter, made then, started at 0 and took the next step for the buffer's first (buf = g): w was
    # [0.19, 2.37] where torch.optim.SGD's param group with dampening set at step 2 gives [0.38, 2.37].
    grads = [np.array([1.0, -2.0]), np.array([0.5, 1.0]), np.array([2.0, 0.0]), np.array([-1.0, 1.0])]
    w, opt = tl.Variable(np.array([1.0, 2.0])), O.SGD(0.1, momentum=0.9)
    want, buf = np.array([1.0, 2.0]), None
    for i, g in enumerate(grads):
        if i == 2:
            opt.dampening = 0.5
        opt.apply([tl.tensor(g)], [w])
        buf = g.copy() if buf is None else 0.9 * buf + (0.5 if i >= 2 else 1.0) * g
        want = want - 0.1 * buf
    np.testing.assert_allclose(w.numpy(), want, rtol=1e-15)
    np.testing.assert_allclose(w.numpy(), [0.3806, 2.3668], rtol=1e-12)  # torch.optim.SGD's, run once


def test_amsgrad_and_centered_set_after_a_step_start_their_slots():
    # Adam's amsgrad and RMSprop's centered set after a step failed with KeyError 'v_max' / 'mean_grad'.  The new
    # slot starts at 0: amsgrad's running maximum is then v itself, centered's mean starts from this gradient.
    g1, g2 = np.array([1.0, -3.0]), np.array([2.0, 0.5])
    w, adam = tl.Variable(np.array([1.0, 2.0])), O.Adam(0.1)
    adam.apply([tl.tensor(g1)], [w])
    adam.amsgrad = True
    adam.apply([tl.tensor(g2)], [w])
    m, v = 0.1 * g1, 0.001 * g1 * g1
    w_ref = np.array([1.0, 2.0]) - 0.1 * (m / 0.1) / (np.sqrt(v / 0.001) + 1e-8)
    m, v = 0.9 * m + 0.1 * g2, 0.999 * v + 0.001 * g2 * g2
    w_ref = w_ref - 0.1 * (m / (1 - 0.9**2)) / (np.sqrt(v / (1 - 0.999**2)) + 1e-8)
    np.testing.assert_allclose(w.numpy(), w_ref, rtol=1e-14)
    np.testing.assert_allclose(adam.state_dict()["slots.0.v_max"], v, rtol=1e-15)
    w, rms = tl.Variable(np.array([1.0, 2.0])), O.RMSprop(0.01, rho=0.9)
    rms.apply([tl.tensor(g1)], [w])
    rms.centered = True
    rms.apply([tl.tensor(g2)], [w])
    v1 = 0.1 * g1 * g1
    w_ref = np.array([1.0, 2.0]) - 0.01 * g1 / (np.sqrt(v1) + 1e-8)
    v2, mean = 0.9 * v1 + 0.1 * g2 * g2, 0.1 * g2
    w_ref = w_ref - 0.01 * g2 / (np.sqrt(v2 - mean * mean) + 1e-8)
    np.testing.assert_allclose(w.numpy(), w_ref, rtol=1e-14)

"""Adamax, NAdam, RAdam, Adadelta and Lion: many steps against NumPy transcriptions of their published update
rules (PyTorch's ``torch.optim`` documentation for the first four, Keras' for Lion), float32 and float64, a
variable that misses a step, weight decay both ways; against ``torch.optim`` and ``keras.optimizers.Lion``
where installed; a traced step against eager; a checkpoint in the middle of training."""

import math

import numpy as np
import pytest

import tensorlib as tl

STEPS = 25
SKIPPED = 5  # the step where the second variable's gradient is None


def _adamax(w, gs, lr, b1=0.9, b2=0.999, eps=1e-8, wd=0.0):
    m, u = np.zeros_like(w), np.zeros_like(w)
    for t, g in enumerate(gs, 1):
        g = g + wd * w
        m = b1 * m + (1 - b1) * g
        u = np.maximum(b2 * u, np.abs(g) + eps)
        w = w - lr / (1 - b1**t) * m / u
    return w


def _nadam(w, gs, lr, b1=0.9, b2=0.999, eps=1e-8, wd=0.0, psi=4e-3, decoupled=False):
    m, v, product = np.zeros_like(w), np.zeros_like(w), 1.0
    for t, g in enumerate(gs, 1):
        if decoupled:
            w = w * (1 - lr * wd)
        else:
            g = g + wd * w
        mu, mu_next = b1 * (1 - 0.5 * 0.96 ** (t * psi)), b1 * (1 - 0.5 * 0.96 ** ((t + 1) * psi))
        product *= mu
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        d = np.sqrt(v / (1 - b2**t)) + eps
        w = w - lr * (1 - mu) / (1 - product) * g / d - lr * mu_next / (1 - product * mu_next) * m / d
    return w


def _radam(w, gs, lr, b1=0.9, b2=0.999, eps=1e-8, wd=0.0, decoupled=False):
    m, v = np.zeros_like(w), np.zeros_like(w)
    rho_inf = 2 / (1 - b2) - 1
    for t, g in enumerate(gs, 1):
        if decoupled:
            w = w * (1 - lr * wd)
        else:
            g = g + wd * w
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        m_hat = m / (1 - b1**t)
        rho = rho_inf - 2 * t * b2**t / (1 - b2**t)
        if rho > 5:
            r = math.sqrt((rho - 4) * (rho - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho))
            w = w - lr * m_hat * r * math.sqrt(1 - b2**t) / (np.sqrt(v) + eps)
        else:
            w = w - lr * m_hat
    return w


def _adadelta(w, gs, lr, rho=0.9, eps=1e-6, wd=0.0):
    s, a = np.zeros_like(w), np.zeros_like(w)
    for g in gs:
        g = g + wd * w
        s = rho * s + (1 - rho) * g * g
        d = np.sqrt(a + eps) / np.sqrt(s + eps) * g
        a = rho * a + (1 - rho) * d * d
        w = w - lr * d
    return w


def _lion(w, gs, lr, b1=0.9, b2=0.99, wd=0.0):
    m = np.zeros_like(w)
    for g in gs:
        w = w * (1 - lr * wd) - lr * np.sign(b1 * m + (1 - b1) * g)
        m = b2 * m + (1 - b2) * g
    return w


CASES = [
    ("adamax", lambda: tl.optimizers.Adamax(0.01), lambda w, gs: _adamax(w, gs, 0.01)),
    (
        "adamax_wd",
        lambda: tl.optimizers.Adamax(0.02, 0.8, 0.99, 1e-3, weight_decay=0.1),
        lambda w, gs: _adamax(w, gs, 0.02, 0.8, 0.99, 1e-3, 0.1),
    ),
    ("nadam", lambda: tl.optimizers.NAdam(0.01), lambda w, gs: _nadam(w, gs, 0.01)),
    (
        "nadam_l2",
        lambda: tl.optimizers.NAdam(0.01, weight_decay=0.1, momentum_decay=0.05),
        lambda w, gs: _nadam(w, gs, 0.01, wd=0.1, psi=0.05),
    ),
    (
        "nadamw",
        lambda: tl.optimizers.NAdam(0.01, weight_decay=0.1, decoupled_weight_decay=True),
        lambda w, gs: _nadam(w, gs, 0.01, wd=0.1, decoupled=True),
    ),
    ("radam", lambda: tl.optimizers.RAdam(0.01), lambda w, gs: _radam(w, gs, 0.01)),  # rectified from step 6
    (
        "radam_fast",  # beta_2 = 0.9: rectified from step 3, with L2 decay
        lambda: tl.optimizers.RAdam(0.01, beta_2=0.9, weight_decay=0.1),
        lambda w, gs: _radam(w, gs, 0.01, b2=0.9, wd=0.1),
    ),
    (
        "radamw",
        lambda: tl.optimizers.RAdam(0.01, beta_2=0.9, weight_decay=0.1, decoupled_weight_decay=True),
        lambda w, gs: _radam(w, gs, 0.01, b2=0.9, wd=0.1, decoupled=True),
    ),
    ("adadelta", lambda: tl.optimizers.Adadelta(), lambda w, gs: _adadelta(w, gs, 1.0)),
    (
        "adadelta_wd",
        lambda: tl.optimizers.Adadelta(0.5, rho=0.5, epsilon=1e-3, weight_decay=0.1),
        lambda w, gs: _adadelta(w, gs, 0.5, 0.5, 1e-3, 0.1),
    ),
    ("lion", lambda: tl.optimizers.Lion(0.01), lambda w, gs: _lion(w, gs, 0.01)),
    (
        "lion_wd",
        lambda: tl.optimizers.Lion(0.01, 0.5, 0.9, weight_decay=0.2),
        lambda w, gs: _lion(w, gs, 0.01, 0.5, 0.9, 0.2),
    ),
]


def _problem(dtype, seed=0):
    rng = np.random.default_rng(seed)
    w = {"a": rng.standard_normal((3, 4)), "b": np.array(rng.standard_normal())}
    grads = [{"a": rng.standard_normal((3, 4)), "b": np.array(rng.standard_normal())} for _ in range(STEPS)]
    grads[2]["a"][1] = 0.0  # some zero gradients
    cast = {k: v.astype(dtype) for k, v in w.items()}
    return cast, [{k: v.astype(dtype) for k, v in g.items()} for g in grads]


@pytest.mark.parametrize("name, make, reference", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_many_steps_match_the_update_rule(name, make, reference, dtype):
    w, grads = _problem(dtype)
    variables = {k: tl.Variable(v) for k, v in w.items()}
    opt = make()
    for t, g in enumerate(grads):
        step = {"a": tl.tensor(g["a"]), "b": None if t == SKIPPED else tl.tensor(g["b"])}
        opt.apply(step, variables)
    tol = dict(rtol=1e-12, atol=1e-13) if dtype == np.float64 else dict(rtol=2e-5, atol=2e-6)
    # Each variable counts its own steps: "b" missed one, so its rule runs on the other 24 gradients.
    want_a = reference(w["a"].astype(np.float64), [g["a"].astype(np.float64) for g in grads])
    want_b = reference(
        w["b"].astype(np.float64), [g["b"].astype(np.float64) for t, g in enumerate(grads) if t != SKIPPED]
    )
    assert variables["a"].dtype == dtype and variables["b"].dtype == dtype
    np.testing.assert_allclose(variables["a"].numpy(), want_a, **tol)
    np.testing.assert_allclose(variables["b"].numpy(), want_b, **tol)
    assert int(opt.iterations.numpy()) == STEPS


TORCH = [
    ("Adamax", {}, {}),
    ("Adamax", {"weight_decay": 0.1}, {"weight_decay": 0.1}),
    ("NAdam", {}, {}),
    (
        "NAdam",
        {"weight_decay": 0.1, "decoupled_weight_decay": True},
        {"weight_decay": 0.1, "decoupled_weight_decay": True},
    ),
    ("RAdam", {}, {}),
    ("RAdam", {"beta_2": 0.9, "weight_decay": 0.1}, {"betas": (0.9, 0.9), "weight_decay": 0.1}),
    ("Adadelta", {"learning_rate": 1.0}, {"lr": 1.0}),
]


@pytest.mark.parametrize("name, ours, theirs", TORCH)
def test_trajectories_match_torch_optim(name, ours, theirs):
    torch = pytest.importorskip("torch")
    w, grads = _problem(np.float64, seed=1)
    v = tl.Variable(w["a"])
    p = torch.tensor(w["a"], requires_grad=True)
    kw = {"learning_rate": 0.01, **ours}
    opt, topt = getattr(tl.optimizers, name)(**kw), getattr(torch.optim, name)([p], **{"lr": 0.01, **theirs})
    for g in grads:
        opt.apply([tl.tensor(g["a"])], [v])
        p.grad = torch.tensor(g["a"])
        topt.step()
    # NAdam: torch keeps its product of momentum coefficients in float32, tensorlib in float64.
    np.testing.assert_allclose(v.numpy(), p.detach().numpy(), rtol=1e-8 if name == "NAdam" else 1e-12, atol=1e-12)


def test_lion_matches_keras():
    keras = pytest.importorskip("keras")
    w, grads = _problem(np.float32, seed=2)
    kv = keras.Variable(w["a"])
    kopt = keras.optimizers.Lion(0.01, beta_1=0.8, beta_2=0.95, weight_decay=0.1)
    v = tl.Variable(w["a"])
    opt = tl.optimizers.Lion(0.01, beta_1=0.8, beta_2=0.95, weight_decay=0.1)
    for g in grads:
        kopt.apply([g["a"]], [kv])
        opt.apply([tl.tensor(g["a"])], [v])
    np.testing.assert_allclose(v.numpy(), np.asarray(kv.numpy()), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name, make, reference", CASES[::2], ids=[c[0] for c in CASES[::2]])
def test_a_traced_step_follows_the_eager_trajectory(name, make, reference):
    w, grads = _problem(np.float64, seed=3)
    eager_v, traced_v = tl.Variable(w["a"]), tl.Variable(w["a"])
    eager_opt, traced_opt = make(), make()

    @tl.function
    def step(g):
        traced_opt.apply([g], [traced_v])

    for g in grads[:8]:
        eager_opt.apply([tl.tensor(g["a"])], [eager_v])
        step(g["a"])
    assert step.trace_count == 1
    np.testing.assert_allclose(traced_v.numpy(), eager_v.numpy(), rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(traced_v.numpy(), reference(w["a"], [g["a"] for g in grads[:8]]), rtol=1e-12)


@pytest.mark.parametrize("name, make, reference", CASES, ids=[c[0] for c in CASES])
def test_training_resumes_from_a_checkpoint(tmp_path, name, make, reference):
    pytest.importorskip("safetensors")
    w, grads = _problem(np.float64, seed=4)
    v, opt = tl.Variable(w["a"], name="w"), make()
    for g in grads[:7]:
        opt.apply({"w": tl.tensor(g["a"])}, {"w": v})
    tl.save_variables(tmp_path / "c.safetensors", {"model": {"w": v}, "opt": opt})
    v2, opt2 = tl.Variable(np.zeros((3, 4)), name="w"), make()
    tl.load_variables(tmp_path / "c.safetensors", {"model": {"w": v2}, "opt": opt2})
    for g in grads[7:14]:
        opt2.apply({"w": tl.tensor(g["a"])}, {"w": v2})
    np.testing.assert_allclose(v2.numpy(), reference(w["a"], [g["a"] for g in grads[:14]]), rtol=1e-12)


def test_nadam_product_slot_is_checked_in_a_checkpoint(tmp_path):
    pytest.importorskip("safetensors")
    v, opt = tl.Variable(np.ones(3), name="w"), tl.optimizers.NAdam(0.1)
    opt.apply({"w": tl.tensor(np.ones(3))}, {"w": v})
    assert opt.variables["slots"]["w"]["mu_product"].dtype == np.float64
    arrays = {"opt.slots.w.mu_product": np.ones(3), "opt.slots.w.m": np.zeros(3), "opt.slots.w.v": np.zeros(3)}
    arrays.update({"opt.slots.w.step": np.array(1, np.int64), "opt.iterations": np.array(1, np.int64)})
    arrays["opt.learning_rate"] = np.array(0.1)
    from safetensors.numpy import save_file

    save_file(arrays, str(tmp_path / "bad.safetensors"))
    with pytest.raises(
        ValueError, match=r"'opt.slots.w.mu_product' has shape \(3,\) float64 in the file, but \(\) float64"
    ):
        tl.load_variables(tmp_path / "bad.safetensors", {"opt": tl.optimizers.NAdam(0.1)})


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: tl.optimizers.Adamax(beta_1=1.0), r"Adamax: beta_1 must be in \[0, 1\), got 1.0"),
        (lambda: tl.optimizers.NAdam(beta_2=-0.1), r"NAdam: beta_2 must be in \[0, 1\), got -0.1"),
        (lambda: tl.optimizers.NAdam(momentum_decay=-1), r"NAdam: momentum_decay must be >= 0, got -1"),
        (lambda: tl.optimizers.RAdam(epsilon=-1e-8), r"RAdam: epsilon must be >= 0"),
        (lambda: tl.optimizers.Adadelta(rho=1.5), r"Adadelta: rho must be in \[0, 1\], got 1.5"),
        (lambda: tl.optimizers.Lion(beta_2=2), r"Lion: beta_2 must be in \[0, 1\], got 2"),
        (lambda: tl.optimizers.Lion(weight_decay=-0.1), r"Lion: weight_decay must be >= 0"),
    ],
)
def test_bad_hyperparameters_are_refused(make, message):
    with pytest.raises(ValueError, match=message):
        make()


@pytest.mark.parametrize("name", ["Adamax", "NAdam", "RAdam", "Adadelta", "Lion"])
def test_float16_variables_step_in_float32_and_integer_ones_are_refused(name):
    w = np.array([0.5, -0.25], np.float16)
    v16, v32 = tl.Variable(w), tl.Variable(w.astype(np.float32))
    lr = 1.0 if name == "Adadelta" else 0.01  # Adadelta's steps are sqrt(epsilon)-sized at first
    o16, o32 = getattr(tl.optimizers, name)(lr), getattr(tl.optimizers, name)(lr)
    for g in ([1e-4, -2.0], [3e-5, 1.0], [0.0, 0.5]):
        o16.apply([tl.tensor(np.array(g, np.float16))], [v16])
        o32.apply([tl.tensor(np.array(g, np.float16).astype(np.float32))], [v32])
        # Rounded after each step, the float16 variable keeps to the float32 trajectory: its slots are
        # float32 (1e-4 squared is 0 in float16, and Adam-like steps were NaN or infinite then).
        assert v16.dtype == np.float16
        np.testing.assert_allclose(v16.numpy().astype(np.float32), v32.numpy(), rtol=2e-3, atol=1e-4)
    with pytest.raises(TypeError, match=name):
        getattr(tl.optimizers, name)(0.01).apply([tl.tensor(np.array([1, 2]))], [tl.Variable(np.array([1, 2]))])


# ---------------------------------------------------------------- schedules
def _polynomial(t, initial, decay_steps, end, power, cycle):
    if cycle:
        horizon = decay_steps * max(math.ceil(t / decay_steps), 1)
    else:
        horizon, t = decay_steps, min(t, decay_steps)
    return (initial - end) * (1 - t / horizon) ** power + end


def _restarts(t, initial, first, t_mul, m_mul, alpha):
    # SGDR by walking the periods one by one (no closed form): start, length and scale of each.
    start, length, scale = 0.0, float(first), 1.0
    while t >= start + length:
        start, length, scale = start + length, length * t_mul, scale * m_mul
    cosine = 0.5 * scale * (1 + math.cos(math.pi * (t - start) / length))
    return initial * ((1 - alpha) * cosine + alpha)


def _one_cycle(t, max_lr, total, pct, anneal, div, final_div, three):
    lo = max_lr / div
    ends = [pct * total - 1] + ([2 * pct * total - 2] if three else []) + [total - 1]
    rates = [lo, max_lr] + ([lo] if three else []) + [lo / final_div]
    t, first = min(t, total - 1), 0.0
    for i, last in enumerate(ends):
        if t <= last or i == len(ends) - 1:
            x = (t - first) / (last - first)
            if anneal == "cos":
                return rates[i + 1] + (rates[i] - rates[i + 1]) / 2 * (math.cos(math.pi * x) + 1)
            return rates[i] + (rates[i + 1] - rates[i]) * x
        first = last


SCHEDULES = [
    (
        lambda: tl.optimizers.PolynomialDecay(0.5, 40, end=0.01, power=2.0),
        lambda t: _polynomial(t, 0.5, 40, 0.01, 2.0, False),
    ),
    (
        lambda: tl.optimizers.PolynomialDecay(0.5, 30, end=0.01, power=0.5, cycle=True),
        lambda t: _polynomial(t, 0.5, 30, 0.01, 0.5, True),
    ),
    (lambda: tl.optimizers.InverseTimeDecay(0.5, 7, 0.3), lambda t: 0.5 / (1 + 0.3 * t / 7)),
    (lambda: tl.optimizers.InverseTimeDecay(0.5, 7, 0.3, staircase=True), lambda t: 0.5 / (1 + 0.3 * (t // 7))),
    (
        lambda: tl.optimizers.CosineDecayRestarts(0.5, 10, t_mul=2.0, m_mul=0.7, alpha=0.1),
        lambda t: _restarts(t, 0.5, 10, 2.0, 0.7, 0.1),
    ),
    (lambda: tl.optimizers.CosineDecayRestarts(0.5, 9, t_mul=1.0), lambda t: _restarts(t, 0.5, 9, 1.0, 1.0, 0.0)),
    (lambda: tl.optimizers.OneCycle(0.5, 80), lambda t: _one_cycle(t, 0.5, 80, 0.3, "cos", 25, 1e4, False)),
    (
        lambda: tl.optimizers.OneCycle(0.5, 80, 0.25, "linear", 10, 100, three_phase=True),
        lambda t: _one_cycle(t, 0.5, 80, 0.25, "linear", 10, 100, True),
    ),
]


@pytest.mark.parametrize("make, reference", SCHEDULES)
def test_schedules_match_their_formulas(make, reference):
    s = make()
    # Every step from 0 to past the end (boundaries, restarts and phase ends included), in one call on a vector.
    steps = np.arange(0, 160)
    got = s(tl.tensor(steps.astype(np.float64))).numpy()
    np.testing.assert_allclose(got, [reference(float(t)) for t in steps], rtol=1e-12, atol=1e-15)
    assert float(s(17)) == pytest.approx(reference(17.0), rel=1e-12)


def test_schedules_match_keras():
    keras = pytest.importorskip("keras")
    ks = keras.optimizers.schedules
    pairs = [
        (tl.optimizers.PolynomialDecay(0.5, 40, end=0.01, power=2.0), ks.PolynomialDecay(0.5, 40, 0.01, power=2.0)),
        (
            tl.optimizers.PolynomialDecay(0.5, 30, end=0.01, power=0.5, cycle=True),
            ks.PolynomialDecay(0.5, 30, 0.01, power=0.5, cycle=True),
        ),
        (tl.optimizers.InverseTimeDecay(0.5, 7, 0.3, staircase=True), ks.InverseTimeDecay(0.5, 7, 0.3, staircase=True)),
        (
            tl.optimizers.CosineDecayRestarts(0.5, 10, t_mul=2.0, m_mul=0.7, alpha=0.1),
            ks.CosineDecayRestarts(0.5, 10, t_mul=2.0, m_mul=0.7, alpha=0.1),
        ),
    ]
    for ours, theirs in pairs:
        for t in (0, 1, 9, 10, 11, 29, 30, 31, 69, 70, 100, 155):
            assert float(ours(t)) == pytest.approx(float(theirs(t)), rel=1e-5), (type(ours).__name__, t)


@pytest.mark.parametrize("anneal, three", [("cos", False), ("linear", False), ("cos", True)])
def test_one_cycle_matches_torch(anneal, three):
    torch = pytest.importorskip("torch")
    p = torch.zeros(1, requires_grad=True)
    opt = torch.optim.SGD([p], lr=0.1)
    theirs = torch.optim.lr_scheduler.OneCycleLR(
        opt, 0.5, total_steps=50, pct_start=0.2, anneal_strategy=anneal, three_phase=three, cycle_momentum=False
    )
    ours = tl.optimizers.OneCycle(0.5, 50, 0.2, anneal, three_phase=three)
    for t in range(50):
        assert float(ours(t)) == pytest.approx(opt.param_groups[0]["lr"], rel=1e-12, abs=1e-15), t
        opt.step()
        theirs.step() if t < 49 else None


def test_a_schedule_drives_a_traced_step_without_retracing():
    v = tl.Variable(np.array([1.0, -2.0]))
    opt = tl.optimizers.SGD(tl.optimizers.OneCycle(0.5, 20, anneal="linear"))

    @tl.function
    def step():
        with tl.GradientTape() as tape:
            loss = tl.sum(v * v)
        opt.apply(tape.gradient(loss, [v]), [v])

    w = np.array([1.0, -2.0])
    for t in range(25):
        step()
        w = w - _one_cycle(t, 0.5, 20, 0.3, "linear", 25, 1e4, False) * 2 * w
    assert step.trace_count == 1
    np.testing.assert_allclose(v.numpy(), w, rtol=1e-12)


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: tl.optimizers.PolynomialDecay(1.0, 0), r"PolynomialDecay: decay_steps must be a whole number >= 1"),
        (lambda: tl.optimizers.PolynomialDecay(1.0, 5, power=-1), r"PolynomialDecay: power must be >= 0"),
        (lambda: tl.optimizers.InverseTimeDecay(1.0, 5, -0.5), r"InverseTimeDecay: decay_rate must be >= 0"),
        (lambda: tl.optimizers.CosineDecayRestarts(1.0, 5, t_mul=0), r"CosineDecayRestarts: t_mul must be >= 1"),
        (lambda: tl.optimizers.OneCycle(1.0, 10, pct_start=1.0), r"OneCycle: pct_start must be in \(0, 1\)"),
        (lambda: tl.optimizers.OneCycle(1.0, 10, anneal="exp"), r"OneCycle: anneal must be 'cos' or 'linear'"),
        (lambda: tl.optimizers.OneCycle(1.0, 2, pct_start=0.1), r"OneCycle: total_steps=2 .* leaves a phase"),
    ],
)
def test_bad_schedule_arguments_are_refused(make, message):
    with pytest.raises(ValueError, match=message):
        make()


# ---------------------------------------------------------------- one optimizer, two models
def _two_models(names):
    return {"w": tl.Variable(np.ones(3), name=names[0])}, {"w": tl.Variable(np.ones(3), name=names[1])}


def test_one_optimizer_for_two_models_restores_each_models_slots_in_any_order(tmp_path):
    # Both models have a variable at path "w".  The slots were keyed by the order of apply calls ("w" for the
    # first, "w/<name>" for the second), so an optimizer restored from a checkpoint that saw the models in the
    # other order gave each model the other's Adam moments: the trajectories differed by 0.18.
    pytest.importorskip("safetensors")
    ga, gb = tl.tensor(np.array([1.0, 2.0, 3.0])), tl.tensor(np.array([-10.0, 0.0, 10.0]))
    a, b = _two_models(["enc_w", "dec_w"])
    opt = tl.optimizers.Adam(0.1)
    for _ in range(3):
        opt.apply({"w": ga}, a)
        opt.apply({"w": gb}, b)
    assert sorted(opt.variables["slots"]) == ["w/dec_w", "w/enc_w"]
    tl.save_variables(tmp_path / "c.safetensors", {"a": a, "b": b, "opt": opt})
    a2, b2 = _two_models(["enc_w", "dec_w"])
    opt2 = tl.optimizers.Adam(0.1)
    tl.load_variables(tmp_path / "c.safetensors", {"a": a2, "b": b2, "opt": opt2})
    opt2.apply({"w": gb}, b2)  # the other order
    opt2.apply({"w": ga}, a2)
    opt.apply({"w": ga}, a)
    opt.apply({"w": gb}, b)
    np.testing.assert_allclose(a2["w"].numpy(), a["w"].numpy(), rtol=1e-13)
    np.testing.assert_allclose(b2["w"].numpy(), b["w"].numpy(), rtol=1e-13)


def test_two_variables_of_one_name_at_one_path_are_told_apart_by_order_with_a_warning():
    a, b = _two_models(["w", "w"])
    opt = tl.optimizers.SGD(0.1, momentum=0.9)
    opt.apply({"w": tl.tensor(np.ones(3))}, a)
    with pytest.warns(UserWarning, match=r"two variables named 'w' came at the path 'w'; .* same order"):
        opt.apply({"w": tl.tensor(np.ones(3))}, b)
    assert sorted(opt.variables["slots"]) == ["w", "w/w"]

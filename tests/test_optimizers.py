"""tl.optimizers against the published update formulas (written here in NumPy), eager and traced."""

import numpy as np
import pytest

import tensorlib as tl

SHAPES = {"layer": {"kernel": (3, 2), "bias": (2,)}, "extra": [(4,)]}
STEPS = 5


def _params(dtype=np.float64):
    rng = np.random.default_rng(0)
    return {
        "layer": {"kernel": rng.normal(size=(3, 2)).astype(dtype), "bias": rng.normal(size=2).astype(dtype)},
        "extra": [rng.normal(size=4).astype(dtype)],
    }


def _leaves(tree):
    return [tree["layer"]["kernel"], tree["layer"]["bias"], tree["extra"][0]]


def _grad_of(p):
    """Gradient of sum(p**4 / 4 + p): depends on p, so every step's state matters."""
    return p**3 + 1.0


def _numpy_run(update, state_names, lr_at, steps=STEPS):
    params = [p.copy() for p in _leaves(_params())]
    states = [{name: np.zeros_like(p) for name in state_names} for p in params]
    for t in range(1, steps + 1):
        for p, s in zip(params, states):
            p[...] = update(p, _grad_of(p), s, lr_at(t - 1), t)
    return params


def sgd_ref(lr, momentum=0.0, nesterov=False, wd=0.0, dampening=0.0):
    def update(p, g, s, lr_t, t):
        g = g + wd * p
        if momentum:
            s["buf"] = momentum * s["buf"] + (1 - dampening) * g if t > 1 else g
            g = g + momentum * s["buf"] if nesterov else s["buf"]
        return p - lr_t * g

    return update, ["buf"]


def adam_ref(lr, b1=0.9, b2=0.999, eps=1e-8, wd=0.0, decoupled=False, amsgrad=False):
    def update(p, g, s, lr_t, t):
        if decoupled:
            p = p * (1 - lr_t * wd)
        else:
            g = g + wd * p
        s["m"] = b1 * s["m"] + (1 - b1) * g
        s["v"] = b2 * s["v"] + (1 - b2) * g * g
        s["v_max"] = np.maximum(s["v_max"], s["v"]) if amsgrad else s["v"]
        m_hat = s["m"] / (1 - b1**t)
        v_hat = s["v_max"] / (1 - b2**t)
        return p - lr_t * m_hat / (np.sqrt(v_hat) + eps)

    return update, ["m", "v", "v_max"]


def adagrad_ref(lr, lr_decay=0.0, wd=0.0, initial=0.0, eps=1e-10):
    def update(p, g, s, lr_t, t):
        g = g + wd * p
        s["acc"] = (s["acc"] if t > 1 else initial) + g * g
        return p - lr_t / (1 + (t - 1) * lr_decay) * g / (np.sqrt(s["acc"]) + eps)

    return update, ["acc"]


def rmsprop_ref(lr, rho=0.99, eps=1e-8, momentum=0.0, centered=False):
    def update(p, g, s, lr_t, t):
        s["v"] = rho * s["v"] + (1 - rho) * g * g
        avg = s["v"]
        if centered:
            s["g"] = rho * s["g"] + (1 - rho) * g
            avg = avg - s["g"] ** 2
        d = g / (np.sqrt(avg) + eps)
        if momentum:
            s["buf"] = momentum * s["buf"] + d
            d = s["buf"]
        return p - lr_t * d

    return update, ["v", "g", "buf"]


CASES = {
    "sgd": (lambda: tl.optimizers.SGD(0.05), sgd_ref(0.05)),
    "sgd_momentum": (lambda: tl.optimizers.SGD(0.05, momentum=0.9), sgd_ref(0.05, 0.9)),
    "sgd_nesterov_wd": (
        lambda: tl.optimizers.SGD(0.05, momentum=0.8, nesterov=True, weight_decay=0.1),
        sgd_ref(0.05, 0.8, True, 0.1),
    ),
    "adam": (lambda: tl.optimizers.Adam(0.01), adam_ref(0.01)),
    "adam_l2": (
        lambda: tl.optimizers.Adam(0.01, beta_1=0.8, beta_2=0.99, weight_decay=0.1),
        adam_ref(0.01, 0.8, 0.99, wd=0.1),
    ),
    "adamw": (lambda: tl.optimizers.AdamW(0.01, weight_decay=0.3), adam_ref(0.01, wd=0.3, decoupled=True)),
    "rmsprop": (lambda: tl.optimizers.RMSprop(0.01), rmsprop_ref(0.01)),
    "sgd_dampening": (
        lambda: tl.optimizers.SGD(0.05, momentum=0.9, dampening=0.3),
        sgd_ref(0.05, 0.9, dampening=0.3),
    ),
    "adam_amsgrad": (lambda: tl.optimizers.Adam(0.01, beta_2=0.5, amsgrad=True), adam_ref(0.01, b2=0.5, amsgrad=True)),
    "adamw_amsgrad": (
        lambda: tl.optimizers.AdamW(0.01, beta_2=0.5, weight_decay=0.3, amsgrad=True),
        adam_ref(0.01, b2=0.5, wd=0.3, decoupled=True, amsgrad=True),
    ),
    "adagrad": (
        lambda: tl.optimizers.Adagrad(0.1, lr_decay=0.1, weight_decay=0.05, initial_accumulator_value=0.2),
        adagrad_ref(0.1, 0.1, 0.05, 0.2),
    ),
    "rmsprop_centered_momentum": (
        lambda: tl.optimizers.RMSprop(0.01, rho=0.9, momentum=0.5, centered=True),
        rmsprop_ref(0.01, 0.9, momentum=0.5, centered=True),
    ),
}


def _run_tensorlib(make_opt, traced, steps=STEPS):
    p = _params()
    variables = {
        "layer": {"kernel": tl.Variable(p["layer"]["kernel"]), "bias": tl.Variable(p["layer"]["bias"])},
        "extra": [tl.Variable(p["extra"][0])],
    }
    opt = make_opt()

    def step():
        with tl.GradientTape() as tape:
            loss = sum(tl.sum(v**4 / 4.0 + v) for v in _leaves(variables))
        grads = tape.gradient(loss, variables)
        opt.apply(grads, variables)
        return loss

    run = tl.function(step) if traced else step
    for _ in range(steps):
        run()
    return [v.numpy() for v in _leaves(variables)], opt


@pytest.mark.parametrize("traced", [False, True], ids=["eager", "traced"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_matches_published_formula(case, traced):
    make_opt, (update, names) = CASES[case]
    lr = make_opt().learning_rate
    expected = _numpy_run(update, names, lambda t: lr)
    got, opt = _run_tensorlib(make_opt, traced)
    for e, g in zip(expected, got):
        np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12)
    assert int(opt.iterations.numpy()) == STEPS


def test_slots_are_variables_updated_by_a_traced_step():
    _, opt = _run_tensorlib(lambda: tl.optimizers.Adam(0.01), traced=True, steps=2)
    slots = opt.variables["slots"]
    assert sorted(slots) == ["extra/0", "layer/bias", "layer/kernel"]
    assert all(isinstance(v, tl.Variable) for s in slots.values() for v in s.values())
    assert all(np.abs(s["m"].numpy()).sum() > 0 for s in slots.values())


def test_schedule_drives_the_learning_rate():
    schedule = tl.optimizers.Warmup(tl.optimizers.CosineDecay(0.1, decay_steps=3), warmup_steps=2)
    lrs = [float(schedule(t)) for t in range(STEPS)]
    expected_lrs = [0.05, 0.1, 0.1, 0.1 * 0.5 * (1 + np.cos(np.pi / 3)), 0.1 * 0.5 * (1 + np.cos(2 * np.pi / 3))]
    np.testing.assert_allclose(lrs, expected_lrs, rtol=1e-6)
    update, names = sgd_ref(None, 0.9)
    expected = _numpy_run(update, names, lambda t: expected_lrs[t])
    for traced in (False, True):
        got, _ = _run_tensorlib(lambda: tl.optimizers.SGD(schedule, momentum=0.9), traced)
        for e, g in zip(expected, got):
            np.testing.assert_allclose(g, e, rtol=1e-6)


def test_step_decay_and_cosine_values():
    step = tl.optimizers.StepDecay(2.0, step_size=3, gamma=0.5)
    assert [float(step(t)) for t in range(7)] == [2.0, 2.0, 2.0, 1.0, 1.0, 1.0, 0.5]
    cosine = tl.optimizers.CosineDecay(1.0, decay_steps=4, alpha=0.2)
    np.testing.assert_allclose([float(cosine(t)) for t in (0, 2, 4, 9)], [1.0, 0.6, 0.2, 0.2], rtol=1e-6)


def test_clip_by_global_norm_numbers_and_structure():
    grads = {"a": tl.tensor(np.array([3.0, 0.0])), "b": [tl.tensor(np.array([[4.0]])), None]}
    clipped, norm = tl.optimizers.clip_by_global_norm(grads, 2.5)
    assert float(norm) == 5.0
    np.testing.assert_allclose(clipped["a"].numpy(), [1.5, 0.0])
    np.testing.assert_allclose(clipped["b"][0].numpy(), [[2.0]])
    assert clipped["b"][1] is None
    unchanged, _ = tl.optimizers.clip_by_global_norm(grads, 10.0)
    np.testing.assert_allclose(unchanged["a"].numpy(), [3.0, 0.0])


def test_optimizer_clips_before_the_update():
    w = tl.Variable(np.zeros(2))
    tl.optimizers.SGD(1.0, global_clipnorm=1.0).apply([tl.tensor(np.array([30.0, 40.0]))], [w])
    np.testing.assert_allclose(w.numpy(), [-0.6, -0.8])


def test_float32_variables_stay_float32():
    w = tl.Variable(np.ones(3, np.float32))
    opt = tl.optimizers.Adam(0.1)
    opt.apply([tl.tensor(np.ones(3, np.float32))], [w])
    assert w.dtype == tl.float32 and opt.variables["slots"]["0"]["v"].dtype == tl.float32


def test_none_gradients_are_skipped():
    a, b = tl.Variable(np.ones(2)), tl.Variable(np.ones(2))
    tl.optimizers.SGD(0.5).apply([None, tl.tensor(np.ones(2))], [a, b])
    assert a.numpy().tolist() == [1.0, 1.0] and b.numpy().tolist() == [0.5, 0.5]


def test_structure_mismatch_names_the_paths():
    v = {"w": tl.Variable(np.ones(2)), "b": tl.Variable(np.ones(1))}
    with pytest.raises(
        ValueError,
        match=r"SGD.apply: grads and variables must have the same structure; "
        r"missing gradients for \[\"\['b'\]\"\]",
    ):
        tl.optimizers.SGD(0.1).apply({"w": tl.tensor(np.ones(2))}, v)
    with pytest.raises(ValueError, match=r"Adam.apply: gradient at \['w'\] has shape \(3,\)"):
        tl.optimizers.Adam().apply({"w": tl.tensor(np.ones(3)), "b": None}, v)
    with pytest.raises(TypeError, match=r"SGD.apply: \[0\] is a Tensor, not a tl.Variable"):
        tl.optimizers.SGD(0.1).apply([tl.tensor(1.0)], [tl.tensor(1.0)])


def test_bad_hyperparameters():
    with pytest.raises(ValueError, match="nesterov=True needs a positive momentum"):
        tl.optimizers.SGD(0.1, nesterov=True)
    with pytest.raises(ValueError, match="SGD: nesterov=True needs a positive momentum and zero dampening, got"):
        tl.optimizers.SGD(0.1, momentum=0.9, nesterov=True, dampening=0.1)
    with pytest.raises(ValueError, match=r"Adam: beta_2 must be in \[0, 1\), got 1.0"):
        tl.optimizers.Adam(beta_2=1.0)
    with pytest.raises(ValueError, match="clip_norm must be positive"):
        tl.optimizers.clip_by_global_norm([tl.tensor(1.0)], 0.0)


def test_matches_torch_optim_when_installed():
    torch = pytest.importorskip("torch")
    for make_opt, make_torch in [
        (lambda: tl.optimizers.Adam(0.01, weight_decay=0.1), lambda p: torch.optim.Adam(p, lr=0.01, weight_decay=0.1)),
        (lambda: tl.optimizers.AdamW(0.01), lambda p: torch.optim.AdamW(p, lr=0.01)),
        (
            lambda: tl.optimizers.SGD(0.05, momentum=0.9, nesterov=True),
            lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9, nesterov=True),
        ),
        (
            lambda: tl.optimizers.RMSprop(0.01, momentum=0.5, centered=True),
            lambda p: torch.optim.RMSprop(p, lr=0.01, momentum=0.5, centered=True),
        ),
        (
            lambda: tl.optimizers.SGD(0.05, momentum=0.9, dampening=0.3, weight_decay=0.1),
            lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9, dampening=0.3, weight_decay=0.1),
        ),
        (
            lambda: tl.optimizers.AdamW(0.01, beta_2=0.5, amsgrad=True),
            lambda p: torch.optim.AdamW(p, lr=0.01, betas=(0.9, 0.5), amsgrad=True),
        ),
        (
            lambda: tl.optimizers.Adagrad(0.1, lr_decay=0.1, weight_decay=0.05, initial_accumulator_value=0.2),
            lambda p: torch.optim.Adagrad(p, lr=0.1, lr_decay=0.1, weight_decay=0.05, initial_accumulator_value=0.2),
        ),
    ]:
        params = [torch.tensor(p, requires_grad=True) for p in _leaves(_params())]
        opt = make_torch(params)
        for _ in range(STEPS):
            opt.zero_grad()
            sum((p**4 / 4 + p).sum() for p in params).backward()
            opt.step()
        got, _ = _run_tensorlib(make_opt, traced=False)
        for p, g in zip(params, got):
            np.testing.assert_allclose(g, p.detach().numpy(), rtol=1e-7, atol=1e-10)


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: tl.optimizers.SGD(0.1, weight_decay=-0.1), "SGD: weight_decay must be >= 0, got -0.1"),
        (lambda: tl.optimizers.SGD(0.1, momentum=float("nan")), "SGD: momentum must be >= 0, got nan"),
        (lambda: tl.optimizers.Adam(0.1, epsilon=-1e-8), "Adam: epsilon must be >= 0, got -1e-08"),
        (lambda: tl.optimizers.AdamW(0.1, weight_decay=-0.01), "AdamW: weight_decay must be >= 0, got -0.01"),
        # A negative momentum was silently ignored (no momentum slot was made).
        (lambda: tl.optimizers.RMSprop(0.1, momentum=-0.5), "RMSprop: momentum must be >= 0, got -0.5"),
        (lambda: tl.optimizers.RMSprop(0.1, epsilon=-1.0), "RMSprop: epsilon must be >= 0, got -1.0"),
        (lambda: tl.optimizers.SGD(0.1, global_clipnorm=0.0), "SGD: global_clipnorm must be positive, got 0.0"),
        (lambda: tl.optimizers.SGD(0.1, momentum=0.9, dampening=-1), "SGD: dampening must be >= 0, got -1"),
        (lambda: tl.optimizers.Adagrad(0.1, lr_decay=-1), "Adagrad: lr_decay must be >= 0, got -1"),
        (
            lambda: tl.optimizers.Adagrad(0.1, initial_accumulator_value=-0.1),
            "Adagrad: initial_accumulator_value must be >= 0, got -0.1",
        ),
    ],
)
def test_negative_hyperparameters_are_refused_as_torch_optim_does(make, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        make()


@pytest.mark.parametrize("traced", [False, True], ids=["eager", "traced"])
def test_dict_gradients_pair_with_variables_by_key_whatever_their_order(traced):
    a, b = tl.Variable(np.ones(2)), tl.Variable(np.ones(1))
    opt = tl.optimizers.SGD(0.5)

    def step():
        opt.apply({"b": tl.tensor(np.array([2.0])), "a": tl.tensor(np.array([1.0, 0.0]))}, {"a": a, "b": b})

    (tl.function(step) if traced else step)()
    np.testing.assert_array_equal(a.numpy(), 1.0 - 0.5 * np.array([1.0, 0.0]))
    np.testing.assert_array_equal(b.numpy(), 1.0 - 0.5 * np.array([2.0]))


def test_gradients_given_as_numbers_and_arrays_and_complex_ones_refused():
    w, m = tl.Variable(2.0), tl.Variable(np.ones(2, np.float32))
    tl.optimizers.SGD(0.25).apply([1.0, np.array([4.0, 8.0])], [w, m])
    assert float(w.numpy()) == 2.0 - 0.25 and m.numpy().tolist() == [0.0, -1.0]
    # The imaginary part was silently dropped by the cast to the variable's dtype.
    with pytest.raises(TypeError, match=r"SGD.apply: gradient at \[0\] is complex128, variable 'm' is float32"):
        tl.optimizers.SGD(0.1).apply([tl.tensor(np.array([1j, 1.0]))], [tl.Variable(np.ones(2, np.float32), name="m")])


def test_clip_by_global_norm_with_an_infinite_clip_norm_clips_nothing():
    grads = [tl.tensor(np.array([3.0, 4.0])), tl.tensor(np.array([12.0], np.float32))]
    clipped, norm = tl.optimizers.clip_by_global_norm(grads, float("inf"))  # was all NaN (inf / inf)
    assert float(norm) == 13.0
    np.testing.assert_array_equal(clipped[0].numpy(), [3.0, 4.0])
    np.testing.assert_array_equal(clipped[1].numpy(), np.array([12.0], np.float32))
    w = tl.Variable(np.zeros(2))
    tl.optimizers.SGD(1.0, global_clipnorm=float("inf")).apply([tl.tensor(np.array([30.0, 40.0]))], [w])
    np.testing.assert_array_equal(w.numpy(), [-30.0, -40.0])


def test_global_norm_of_complex_tensors_uses_their_magnitude():
    z = np.array([3 + 4j, 1 - 2j])
    norm = tl.optimizers.global_norm([tl.tensor(z), tl.tensor(np.array([2.0]))])  # was complex: sqrt(sum z^2)
    assert norm.dtype == tl.float64
    np.testing.assert_allclose(float(norm), np.linalg.norm(np.concatenate([z, [2.0]])), rtol=1e-15)
    clipped, _ = tl.optimizers.clip_by_global_norm([tl.tensor(z)], 1.0)
    np.testing.assert_allclose(clipped[0].numpy(), z / np.linalg.norm(z), rtol=1e-15)


def test_clip_by_global_norm_refuses_integer_tensors():
    # The scale was cast to the integer dtype: [3, 4] clipped to norm 1 became [0, 0].
    with pytest.raises(TypeError, match=r"clip_by_global_norm: entry \[1\] has dtype int64"):
        tl.optimizers.clip_by_global_norm([tl.tensor(np.array([1.0])), tl.tensor(np.array([3, 4]))], 1.0)


@pytest.mark.parametrize("traced", [False, True], ids=["eager", "traced"])
@pytest.mark.parametrize("case", ["adam", "adamw", "rmsprop_centered_momentum", "sgd_momentum"])
def test_float16_variables_are_updated_in_float32(case, traced):
    # Adam on float16 gave [-inf, -inf, 0.998, nan] for gradients [1e-4, 1e-3, 1, 0]: epsilon=1e-8 and
    # (1 - b2) * g^2 are 0 in float16. Reference: the NumPy formula in float32, rounded to float16 each step.
    make_opt, (update, names) = CASES[case]
    opt, lr = make_opt(), make_opt().learning_rate
    w = tl.Variable(np.array([1.0, -1.0, 0.5, 2.0], np.float16))
    grads = [np.array([1e-4, 1e-3, 1.0, 0.0], np.float16), np.array([-3e-5, 1e-3, -2.0, 0.0], np.float16)]
    step = tl.function(lambda g: opt.apply([g], [w])) if traced else (lambda g: opt.apply([g], [w]))
    p, state = w.numpy().astype(np.float32), {name: np.zeros(4, np.float32) for name in names}
    for t, g in enumerate(grads, start=1):
        step(tl.tensor(g))
        p = update(p, g.astype(np.float32), state, np.float32(lr), t).astype(np.float16).astype(np.float32)
    slots = [s for named in opt.variables["slots"].values() for n, s in named.items() if n != "step"]
    assert w.dtype == tl.float16 and {s.dtype for s in slots} == {tl.float32}
    np.testing.assert_array_equal(w.numpy(), p.astype(np.float16))


@pytest.mark.parametrize("traced", [False, True], ids=["eager", "traced"])
def test_clip_by_global_norm_of_an_infinite_or_nan_norm_is_all_nan_as_in_tensorflow(traced):
    # [inf, 4], [1] clipped to 1 gave [nan, 0], [0]: the finite entries were scaled by 1 / inf = 0 and a
    # step with them silently did nothing.  tf.clip_by_global_norm makes every entry NaN.
    clip = tl.function(tl.optimizers.clip_by_global_norm) if traced else tl.optimizers.clip_by_global_norm
    for bad in (np.inf, np.nan):
        grads = [tl.tensor(np.array([bad, 4.0])), tl.tensor(np.array([1.0], np.float32))]
        clipped, norm = clip(grads, 1.0)
        assert np.isnan(float(norm)) if np.isnan(bad) else float(norm) == np.inf
        assert all(np.isnan(c.numpy()).all() for c in clipped) and clipped[1].dtype == tl.float32
    # 1e200, whose square overflows float64 (TensorFlow's norm is inf there), is a finite norm, clipped right.
    clipped, norm = clip([tl.tensor(np.array([1e200, 4.0])), tl.tensor(np.array([1.0], np.float32))], 1.0)
    assert float(norm) == 1e200 and [c.numpy().tolist() for c in clipped] == [[1.0, 4e-200], [0.0]]
    # A clip_norm past float32's range is no clipping (it was inf in float32, and inf / inf gave NaN).
    clipped, norm = clip([tl.tensor(np.array([3.0, 4.0], np.float32))], 1e300)
    assert float(norm) == 5.0 and clipped[0].numpy().tolist() == [3.0, 4.0]


def test_a_learning_rate_set_after_tracing_is_used_by_the_traced_step():
    # The traced step had baked the learning rate in: after opt.learning_rate = 1.0 (or assigning a
    # tl.Variable given as the rate) it still stepped by 0.1.  Reference: w -= lr * 1 with each lr in turn.
    w, rate = tl.Variable(np.zeros(1)), tl.Variable(0.5)
    opt = tl.optimizers.SGD(0.1)
    step = tl.function(lambda: opt.apply([tl.tensor(np.ones(1))], [w]))

    def set_rate(value):
        opt.learning_rate = value

    changes = [
        lambda: None,
        lambda: set_rate(1.0),
        lambda: set_rate(tl.optimizers.StepDecay(0.25, step_size=1, gamma=0.5)),
        lambda: set_rate(0.01),
        lambda: set_rate(rate),
        lambda: rate.assign(2.0),
        lambda: set_rate(0.001),
    ]
    lrs = []
    for change in changes:
        change()
        step()
        lrs.append(float(opt.learning_rate(len(lrs))) if callable(opt.learning_rate) else opt.learning_rate)
    assert lrs == [0.1, 1.0, 0.25 * 0.5**2, 0.01, 0.5, 2.0, 0.001]
    np.testing.assert_allclose(w.numpy(), [-sum(lrs)], rtol=1e-15)
    assert float(rate.numpy()) == 2.0  # setting a number afterwards does not write into the user's Variable
    with pytest.raises(TypeError, match="SGD: learning_rate must be a number, a 0-d float tl.Variable or a schedule"):
        opt.learning_rate = None
    with pytest.raises(ValueError, match="SGD: learning_rate must be >= 0, got -1.0"):
        opt.learning_rate = -1


def test_a_variable_first_updated_later_takes_its_own_first_step():
    # torch.optim keeps per-parameter state: SGD's dampened buffer starts as g, Adagrad's lr_decay and
    # Adam's bias corrections count that parameter's steps.  Reference: the NumPy formulas from t = 1.
    for make, (update, names) in (CASES["sgd_dampening"], CASES["adagrad"], CASES["adam_amsgrad"]):
        a, b = tl.Variable(np.ones(2)), tl.Variable(np.ones(2))
        opt = make()
        opt.apply([tl.tensor(np.array([1.0, 2.0])), None], [a, b])
        p, state = np.ones(2), {name: np.zeros(2) for name in names}
        for t in (1, 2):
            opt.apply([tl.tensor(np.array([1.0, 2.0])), tl.tensor(_grad_of(b.numpy()))], [a, b])
            p = update(p, _grad_of(p), state, make().learning_rate, t)
        np.testing.assert_allclose(b.numpy(), p, rtol=1e-12)


def test_exponential_decay_and_piecewise_constant_follow_keras_formulas():
    steps = [0, 1, 9, 10, 11, 20, 21, 10**6]
    for staircase in (False, True):
        s = tl.optimizers.ExponentialDecay(0.1, decay_steps=10, decay_rate=0.9, staircase=staircase)
        expected = [0.1 * 0.9 ** ((t // 10) if staircase else t / 10) for t in steps]
        np.testing.assert_allclose([float(s(t)) for t in steps], expected, rtol=1e-13, atol=0)
    s = tl.optimizers.PiecewiseConstant([10, 20], [1.0, 0.5, 0.1])  # Keras: a value holds through its boundary
    assert [float(s(t)) for t in steps] == [1.0, 1.0, 1.0, 1.0, 0.5, 0.5, 0.1, 0.1]
    w = tl.Variable(np.zeros(1))
    opt = tl.optimizers.SGD(tl.optimizers.PiecewiseConstant([1, 2], [1.0, 0.5, 0.25]))
    step = tl.function(lambda: opt.apply([tl.tensor(np.ones(1))], [w]))
    for _ in range(4):
        step()
    assert w.numpy().tolist() == [-(1.0 + 1.0 + 0.5 + 0.25)]
    with pytest.raises(ValueError, match="PiecewiseConstant: needs one value more than boundaries, got 2 boundaries"):
        tl.optimizers.PiecewiseConstant([1, 2], [1.0, 0.5])
    with pytest.raises(ValueError, match=r"PiecewiseConstant: boundaries must increase, got \[2, 1\]"):
        tl.optimizers.PiecewiseConstant([2, 1], [1.0, 0.5, 0.1])
    with pytest.raises(ValueError, match="ExponentialDecay: decay_steps must be a whole number >= 1, got 0"):
        tl.optimizers.ExponentialDecay(0.1, 0, 0.5)


@pytest.mark.parametrize(
    "make", [tl.optimizers.StepDecay, tl.optimizers.CosineDecay, tl.optimizers.Warmup, tl.optimizers.ExponentialDecay]
)
def test_schedules_refuse_fractional_step_counts(make):
    # StepDecay(1.0, step_size=2.5) decayed every 2 steps: int() had truncated it without a word.
    extra = (0.5,) if make is tl.optimizers.ExponentialDecay else ()
    with pytest.raises(ValueError, match=rf"{make.__name__}: \w+ must be a whole number >= 1, got 2.5"):
        make(1.0, 2.5, *extra)
    assert float(make(1.0, 4.0, *extra)(0)) == (0.25 if make is tl.optimizers.Warmup else 1.0)


@pytest.mark.parametrize("traced", [False, True], ids=["eager", "traced"])
def test_clip_by_norm_matches_the_formula_and_has_a_finite_gradient_at_zero(traced):
    clip = tl.optimizers.clip_by_norm
    rng = np.random.default_rng(0)
    for axes in (None, 0, 1, (0, 1)):
        x = rng.normal(size=(3, 4)) * np.array([0.01, 1.0, 10.0, 0.0])
        norm = np.sqrt(np.sum(x * x, axis=axes, keepdims=True))
        f = tl.function(lambda v: clip(v, 1.0, axes)) if traced else (lambda v: clip(v, 1.0, axes))
        np.testing.assert_allclose(f(x).numpy(), x / np.maximum(norm, 1.0), rtol=1e-14)
    g = tl.grad(lambda v: tl.sum(tl.optimizers.clip_by_norm(v, 1.0) * np.array([1.0, 2.0])))(tl.tensor(np.zeros(2)))
    assert g.numpy().tolist() == [1.0, 2.0]  # the identity there, as tf.clip_by_norm's
    # float16: the squares are summed and the scale applied in float32.  The scale 1 / 50000 cast to
    # float16 (subnormal there) had given [0.6006, 0.8013] for [0.6, 0.8] in clip_by_global_norm too.
    x16 = np.array([30000.0, 40000.0], np.float16)
    for half in (tl.optimizers.clip_by_norm(x16, 1.0), tl.optimizers.clip_by_global_norm([tl.tensor(x16)], 1.0)[0][0]):
        assert (
            half.dtype == tl.float16
            and half.numpy().tolist() == (x16.astype(np.float64) / 5e4).astype(np.float16).tolist()
        )
    with pytest.raises(TypeError, match=r"clip_by_norm: t has dtype int64 \(shape \(2,\)\); only float or complex"):
        tl.optimizers.clip_by_norm(np.array([1, 2]), 1.0)


def test_a_step_refused_by_a_recording_tape_changes_no_variable_and_no_slot():
    # The assign to `b` (read by the recording tape) was refused after `a`'s Adam moments had stepped:
    # a's m was 0.1 while a itself and the step counter were unchanged.
    a, b = tl.Variable(np.ones(2), name="a"), tl.Variable(np.ones(2), name="b")
    opt = tl.optimizers.Adam(0.1)
    with tl.GradientTape() as tape:
        loss = tl.sum(b * b)
        with pytest.raises(
            RuntimeError, match=r"Adam.apply: Variable.assign: variable 'b' .* was read by a GradientTape"
        ):
            opt.apply([tl.tensor(np.ones(2)), tl.tensor(np.ones(2))], [a, b])
    assert a.numpy().tolist() == [1.0, 1.0] and int(opt.iterations.numpy()) == 0
    assert all(not s.numpy().any() for named in opt.variables["slots"].values() for s in named.values())


def test_a_step_inside_a_recording_tape_is_not_recorded_and_a_spent_tape_does_not_block_it():
    # apply() inside a tape block read each variable on the tape and its assign was then refused
    # (after the Adam moments had stepped); after tape.gradient() of a non-persistent tape the next op
    # on a Variable crashed with AttributeError: 'NoneType' object has no attribute 'append'.
    a, b = tl.Variable(np.ones(2)), tl.Variable(np.ones(2))
    opt = tl.optimizers.Adam(0.1, global_clipnorm=1.0)
    with tl.GradientTape() as tape:
        opt.apply([tl.tensor(np.ones(2))], [a])  # torch.optim steps under no_grad: nothing recorded
        loss = tl.sum(a * a)
    np.testing.assert_allclose(tape.gradient(loss, a).numpy(), 2 * (1 - 0.1) * np.ones(2), rtol=1e-8)
    with tl.GradientTape() as tape:  # TensorFlow's pattern: step inside the block, after the gradient
        grads = tape.gradient(tl.sum(b * b), [b])
        doubled = b * 2.0
        tl.optimizers.SGD(0.25).apply(grads, [b])
    assert doubled.numpy().tolist() == [2.0, 2.0] and b.numpy().tolist() == [0.5, 0.5]


def test_apply_gradients_takes_tensorflows_pairs():
    a, b = tl.Variable(np.ones(2)), tl.Variable(np.ones(1))
    opt = tl.optimizers.SGD(0.5)
    opt.apply_gradients(zip([tl.tensor(np.array([1.0, 2.0])), None], [a, b]))
    assert a.numpy().tolist() == [0.5, 0.0] and b.numpy().tolist() == [1.0]
    with pytest.raises(TypeError, match=r"SGD.apply_gradients: entry 0 is a Tensor, not a \(gradient, variable\) pair"):
        opt.apply_gradients([tl.tensor(1.0)])


def test_a_variable_given_twice_with_different_gradients_is_refused():
    # SGD took the first of [1, 1] and [3, 3] for one variable and dropped the other without a word.
    v = tl.Variable(np.ones(2), name="v")
    with pytest.raises(
        ValueError, match=r"SGD.apply: variable 'v' appears at \[0\] and \[1\] with different gradients"
    ):
        tl.optimizers.SGD(0.5).apply([tl.tensor(np.ones(2)), tl.tensor(np.full(2, 3.0))], [v, v])
    assert v.numpy().tolist() == [1.0, 1.0]
    with tl.GradientTape() as tape:  # a shared layer: tape.gradient gives the one total gradient twice
        loss = tl.sum(v * v)
    tl.optimizers.SGD(0.5).apply(tape.gradient(loss, [v, v]), [v, v])
    assert v.numpy().tolist() == [0.0, 0.0]


def test_a_module_stands_for_its_trainable_variables():
    # apply(grads, model) was "missing gradients for ['<root>']"; build(model) "<root> is a Sequential".
    model = tl.nn.Sequential(tl.nn.Dense(2, 2, seed=0, dtype=tl.float64), tl.nn.BatchNorm(2, dtype=tl.float64))
    twin = tl.nn.Sequential(tl.nn.Dense(2, 2, seed=0, dtype=tl.float64), tl.nn.BatchNorm(2, dtype=tl.float64))
    grads = tl.tree.map(lambda v: tl.tensor(np.full(v.shape, 0.5)), model.trainable_variables)
    opt, reference = tl.optimizers.Adam(0.1), tl.optimizers.Adam(0.1)
    opt.build(model)
    assert sorted(opt.variables["slots"]) == ["0/bias", "0/kernel", "1/offset", "1/scale"]
    opt.apply(grads, model)
    reference.apply(grads, twin.trainable_variables)
    for a, b in zip(tl.tree.leaves(model.variables), tl.tree.leaves(twin.variables)):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_global_norm_of_no_tensors_is_zero_as_in_tensorflow():
    # clip_by_global_norm([None, None], 1.0) (no variable got a gradient) raised "no tensors given";
    # tf.clip_by_global_norm returns the Nones and a norm of 0.
    clipped, norm = tl.optimizers.clip_by_global_norm([None, {"a": None}], 1.0)
    assert clipped == [None, {"a": None}] and float(norm) == 0.0 and norm.dtype == tl.float32
    assert float(tl.optimizers.global_norm([])) == 0.0


@pytest.mark.parametrize(
    "make",
    [
        lambda: tl.optimizers.SGD(0.1),
        lambda: tl.optimizers.Adam(0.1),
        lambda: tl.optimizers.SGD(tl.optimizers.StepDecay(0.1, 5)),
    ],
)
def test_an_optimizer_made_on_one_backend_steps_variables_of_another(make):
    # An optimizer made before `with tl.backend(...)` (its step counter and rate on NumPy) stepping a
    # variable of another backend raised "Mul: inputs are on different backends" (with a schedule
    # always; with a constant rate once the rate became a Variable).  Reference: w - 0.1 * sign(g).
    class Other(tl.backends.Backend):
        def __init__(self):
            super().__init__("other_for_optimizers", np)

    opt = make()
    with tl.testing.isolated_registries():
        tl.backends.register(Other())
        with tl.backend("other_for_optimizers"):
            w, g = tl.Variable(np.ones(2)), tl.tensor(np.array([1.0, 2.0]))
        opt.apply([g], [w])
        assert w.backend.name == "other_for_optimizers"
    expected = [0.9, 0.9] if isinstance(opt, tl.optimizers.Adam) else [0.9, 0.8]
    np.testing.assert_allclose(w.numpy(), expected, rtol=1e-8)  # Adam: 0.1 * g / (|g| + 1e-8)


def test_a_new_schedule_is_never_mistaken_for_a_freed_one():
    # Traced graphs were keyed by id(schedule): a new schedule at the address of a freed one ran the old
    # schedule's graph (schedules of 1, 2, ..., 6 moved w by 6 instead of 21).
    w = tl.Variable(np.zeros(1))
    opt = tl.optimizers.SGD(0.1)
    step = tl.function(lambda: opt.apply([tl.tensor(np.ones(1))], [w]))
    for i in range(1, 7):
        opt.learning_rate = tl.optimizers.StepDecay(float(i), 1000)
        step()
        opt.learning_rate = 0.0  # frees the schedule: the next one is made at its address
    assert w.numpy().tolist() == [-21.0]

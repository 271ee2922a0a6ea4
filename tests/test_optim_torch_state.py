"""Optimizer.load_torch_state_dict for Adagrad, Adamax, NAdam, RAdam and Adadelta, and for complex parameters.

With torch (optional): k steps in torch, its state loaded here, m more steps in both from the same parameters and
gradients agree in float64.  Without torch: a state dict in torch's documented layout, built by hand, loads and the
next step equals a NumPy transcription of the update formula in torch's docs.
"""

import numpy as np
import pytest

import tensorlib as tl

_SHAPES = [(3,), (2, 2), (4,)]


def _grads(i, values):  # gradients that depend on the parameters, with some exact zeros
    if np.iscomplexobj(values[0]):  # (a complex sine grows fast: a linear pull keeps the run bounded)
        out = [0.5 * v + 0.1 * np.cos(i) * (1 - 2j) for v in values]
    else:
        out = [np.sin(v * (i + 1)) + 0.1 * v**2 for v in values]
    out[1] = np.where(np.arange(out[1].size).reshape(out[1].shape) % 2 == 0, 0.0, out[1])
    return out


_CASES = {
    "adagrad": ("Adagrad", dict(lr=0.1, lr_decay=0.01, weight_decay=0.1, initial_accumulator_value=0.2, eps=1e-9)),
    "adamax": ("Adamax", dict(lr=0.01, betas=(0.8, 0.99), weight_decay=0.1, eps=1e-7)),
    "nadam": ("NAdam", dict(lr=0.01, betas=(0.8, 0.99), weight_decay=0.1, momentum_decay=0.01)),
    "nadamw_max": ("NAdam", dict(lr=0.01, weight_decay=0.3, decoupled_weight_decay=True, maximize=True)),
    "radam": ("RAdam", dict(lr=0.01, betas=(0.8, 0.9), weight_decay=0.1)),  # rectified from step 6 on
    "radamw": ("RAdam", dict(lr=0.01, weight_decay=0.3, decoupled_weight_decay=True)),
    "adadelta": ("Adadelta", dict(lr=0.5, rho=0.8, eps=1e-5, weight_decay=0.1, maximize=True)),
}


def _run_and_resume(torch, name, settings, shapes, dtype, more_groups=False, k=5, m=6):
    rng = np.random.default_rng(0)
    values = [rng.standard_normal(s) + (1j * rng.standard_normal(s) if dtype == "complex" else 0) for s in shapes]
    params = [torch.nn.Parameter(torch.tensor(v)) for v in values]
    groups = [{"params": params[:2]}, {"params": params[2:], "lr": 0.03}] if more_groups else params
    torch_opt = getattr(torch.optim, name)(groups, **settings)

    def torch_step(i):
        for p, g in zip(params, _grads(i, [p.detach().numpy() for p in params])):
            # torch's complex gradient is conj of the JAX-convention one tensorlib takes (docs/complex.md)
            p.grad = torch.tensor(np.conj(g))
        torch_opt.step()

    for i in range(k):
        torch_step(i)
    variables = [tl.Variable(p.detach().numpy().copy()) for p in params]
    ours = [{"params": variables[:2]}, {"params": variables[2:]}] if more_groups else variables
    opt = getattr(tl.optimizers, name)(ours)  # its own defaults: every setting comes from torch's state
    opt.load_torch_state_dict(torch_opt.state_dict())
    assert int(opt.iterations.numpy()) == (0 if name == "SGD" else k)  # torch's SGD counts no steps
    for i in range(k, k + m):
        torch_step(i)
        opt.apply([tl.tensor(g) for g in _grads(i, [v.numpy() for v in variables])])
    for p, v in zip(params, variables):
        np.testing.assert_allclose(v.numpy(), p.detach().numpy(), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("case", sorted(_CASES))
def test_resumes_from_torch_as_torch_continues(case):
    torch = pytest.importorskip("torch")
    name, settings = _CASES[case]
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)  # NAdam's mu_product is kept in the default dtype
    try:
        _run_and_resume(torch, name, settings, _SHAPES, "real", more_groups=case.endswith("w"))
    finally:
        torch.set_default_dtype(previous)


@pytest.mark.parametrize("name", ["SGD", "Adam", "RMSprop", "Adagrad", "Adamax", "NAdam", "RAdam", "Adadelta"])
def test_resumes_complex_parameters_from_torch(name):
    torch = pytest.importorskip("torch")
    settings = {"SGD": dict(lr=0.1, momentum=0.9), "RMSprop": dict(lr=0.01, centered=True, momentum=0.5)}
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        _run_and_resume(torch, name, settings.get(name, dict(lr=0.01)), [(3,), (2, 2)], "complex")
    finally:
        torch.set_default_dtype(previous)


def _group(**settings):
    base = {"weight_decay": 0.0, "maximize": False, "foreach": None, "differentiable": False, "params": [0]}
    return {**base, **settings}


_W, _G = np.array([1.0, -2.0, 0.5]), np.array([0.5, -0.25, 0.0])


def _by_hand(name, state, group, expected):
    w = tl.Variable(_W.copy())
    opt = getattr(tl.optimizers, name)([w])
    opt.load_torch_state_dict({"state": {0: state}, "param_groups": [group]})
    opt.apply([tl.tensor(_G)])
    np.testing.assert_allclose(w.numpy(), expected, rtol=1e-14, atol=1e-16)
    return opt


def test_adagrad_state_by_hand():
    acc = np.array([0.3, 0.2, 0.1])
    group = _group(lr=0.1, lr_decay=0.5, eps=1e-10, initial_accumulator_value=0.0, fused=None)
    opt = _by_hand("Adagrad", {"step": np.float32(3.0), "sum": acc}, group, _adagrad(acc))
    assert int(opt.iterations.numpy()) == 4  # torch's step 3, then one more


def _adagrad(acc):  # torch docs: clr = lr / (1 + (t - 1) lr_decay), t = 4; sum += g^2; w -= clr g / (sqrt(sum) + eps)
    s = acc + _G**2
    return _W - 0.1 / (1 + 3 * 0.5) * _G / (np.sqrt(s) + 1e-10)


def test_adamax_state_by_hand():
    m, u = np.array([0.1, -0.2, 0.3]), np.array([0.4, 0.05, 0.2])
    group = _group(lr=0.1, betas=(0.8, 0.9), eps=1e-8, capturable=False)
    m4 = 0.8 * m + 0.2 * _G
    u4 = np.maximum(0.9 * u, np.abs(_G) + 1e-8)
    _by_hand("Adamax", {"step": np.float32(3.0), "exp_avg": m, "exp_inf": u}, group, _W - 0.1 / (1 - 0.8**4) * m4 / u4)


def test_nadam_state_by_hand():
    m, v, t, psi, b1, b2 = np.array([0.1, -0.2, 0.3]), np.array([0.01, 0.04, 0.02]), 4, 4e-3, 0.8, 0.9
    mus = [b1 * (1 - 0.5 * 0.96 ** (k * psi)) for k in range(1, t + 2)]
    product = np.prod(mus[:3])  # what torch kept after 3 steps
    group = _group(lr=0.1, betas=(b1, b2), eps=1e-8, momentum_decay=psi, decoupled_weight_decay=False)
    m4, v4 = b1 * m + (1 - b1) * _G, b2 * v + (1 - b2) * _G**2
    denom = np.sqrt(v4 / (1 - b2**t)) + 1e-8
    p4 = product * mus[3]
    expected = _W - 0.1 * (1 - mus[3]) / (1 - p4) * _G / denom - 0.1 * mus[4] / (1 - p4 * mus[4]) * m4 / denom
    state = {"step": np.float32(3.0), "mu_product": np.float64(product), "exp_avg": m, "exp_avg_sq": v}
    _by_hand("NAdam", state, group, expected)


def test_radam_state_by_hand():
    m, v, t, b1, b2 = np.array([0.1, -0.2, 0.3]), np.array([0.01, 0.04, 0.02]), 7, 0.8, 0.9
    group = _group(lr=0.1, betas=(b1, b2), eps=1e-8, decoupled_weight_decay=False)
    m7, v7 = b1 * m + (1 - b1) * _G, b2 * v + (1 - b2) * _G**2
    rho_inf = 2 / (1 - b2) - 1
    rho_t = rho_inf - 2 * t * b2**t / (1 - b2**t)
    assert rho_t > 5
    r = np.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
    adaptive = np.sqrt(1 - b2**t) / (np.sqrt(v7) + 1e-8)
    expected = _W - 0.1 * m7 / (1 - b1**t) * r * adaptive
    _by_hand("RAdam", {"step": np.float32(6.0), "exp_avg": m, "exp_avg_sq": v}, group, expected)


def test_adadelta_state_by_hand():
    sq, acc = np.array([0.3, 0.2, 0.1]), np.array([0.01, 0.02, 0.03])
    group = _group(lr=0.5, rho=0.8, eps=1e-6, capturable=False)
    sq4 = 0.8 * sq + 0.2 * _G**2
    delta = np.sqrt(acc + 1e-6) / np.sqrt(sq4 + 1e-6) * _G
    opt = _by_hand("Adadelta", {"step": np.float32(3.0), "square_avg": sq, "acc_delta": acc}, group, _W - 0.5 * delta)
    np.testing.assert_allclose(opt.variables["slots"]["0"]["acc_delta"].numpy(), 0.8 * acc + 0.2 * delta**2)
    assert int(opt.iterations.numpy()) == 4  # torch's step 3, then one more


def test_complex_state_by_hand_is_read_as_real_pairs():
    # torch.optim.SGD on a complex parameter keeps a complex momentum buffer; the update runs on view_as_real
    w = tl.Variable(np.array([1 + 1j, -2 + 0.5j]))
    buf, g_torch = np.array([0.5 - 0.25j, 0.1 + 0.2j]), np.array([1 - 1j, 0.5 + 0.5j])
    group = _group(lr=0.1, momentum=0.9, dampening=0, nesterov=False)
    opt = tl.optimizers.SGD([w])
    opt.load_torch_state_dict({"state": {0: {"momentum_buffer": buf}}, "param_groups": [group]})
    opt.apply([tl.tensor(np.conj(g_torch))])  # tensorlib's gradient is the conjugate of torch's
    np.testing.assert_allclose(w.numpy(), np.array([1 + 1j, -2 + 0.5j]) - 0.1 * (0.9 * buf + g_torch), rtol=1e-14)


def test_wrong_state_refused_before_anything_changes():
    w = tl.Variable(np.array([1 + 1j, -2 + 0.5j]))
    opt = tl.optimizers.Adagrad([w], lr=0.3)
    group = _group(lr=0.1, lr_decay=0.0, eps=1e-10, initial_accumulator_value=0.0)
    with pytest.raises(ValueError, match=r"'sum' has shape \(3,\).*needs \(2,\)"):
        opt.load_torch_state_dict({"state": {0: {"sum": np.ones(3, complex)}}, "param_groups": [group]})
    r = tl.Variable(np.ones(2))
    with pytest.raises(ValueError, match="'sum' is complex"):
        tl.optimizers.Adagrad([r]).load_torch_state_dict(
            {"state": {0: {"sum": np.ones(2, complex)}}, "param_groups": [group]}
        )
    with pytest.raises(ValueError, match=r"'mu_product' has shape \(2,\).*needs \(\)"):
        tl.optimizers.NAdam([r]).load_torch_state_dict(
            {"state": {0: {"mu_product": np.ones(2)}}, "param_groups": [_group(lr=0.1)]}
        )
    assert opt.param_groups[0]["lr"] == 0.3


def test_nadam_radam_keep_their_decoupled_weight_decay_flag():
    w = tl.Variable(np.ones(2))
    for name in ("NAdam", "RAdam"):
        opt = getattr(tl.optimizers, name)([w])
        opt.load_torch_state_dict({"state": {}, "param_groups": [_group(lr=0.1, decoupled_weight_decay=True)]})
        assert opt.decoupled_weight_decay is True


def test_rmsprop_iterations_follow_torchs_step_for_a_schedule():
    # torch.optim.RMSprop keeps a step per parameter; iterations (a schedule's argument) became it for Adam but
    # stayed 0 for RMSprop, so a schedule started over after the load
    w = tl.Variable(np.array([1.0, -2.0]))
    schedule = tl.optimizers.ExponentialDecay(0.1, 1, 0.5)
    opt = tl.optimizers.RMSprop([w], lr=schedule)
    sq, g = np.array([0.04, 0.09]), np.array([0.5, -0.25])
    group = _group(lr=0.1 * 0.5**4, alpha=0.9, eps=1e-8, momentum=0.0, centered=False, capturable=False)
    opt.load_torch_state_dict({"state": {0: {"step": np.float32(4.0), "square_avg": sq}}, "param_groups": [group]})
    assert int(opt.iterations.numpy()) == 4
    opt.apply([tl.tensor(g)])
    v = (
        0.9 * sq + 0.1 * g**2
    )  # torch docs: v = alpha v + (1 - alpha) g^2; w -= lr g / (sqrt(v) + eps), lr = 0.1 * 0.5^4
    np.testing.assert_allclose(w.numpy(), np.array([1.0, -2.0]) - 0.1 * 0.5**4 * g / (np.sqrt(v) + 1e-8), rtol=1e-14)


def test_bfloat16_torch_state_loads():
    # torch's .numpy() refuses bfloat16: loading a bfloat16 run's state failed with torch's "unsupported ScalarType"
    torch = pytest.importorskip("torch")
    p = torch.nn.Parameter(torch.tensor([1.0, 2.0], dtype=torch.bfloat16))
    torch_opt = torch.optim.Adam([p], lr=0.1)
    p.grad = torch.tensor([0.5, -0.5], dtype=torch.bfloat16)
    torch_opt.step()
    w = tl.Variable(np.array([1.0, 2.0], np.float32))
    opt = tl.optimizers.Adam([w])
    opt.load_torch_state_dict(torch_opt.state_dict())
    slots = opt.variables["slots"]["0"]
    np.testing.assert_array_equal(slots["m"].numpy(), torch_opt.state[p]["exp_avg"].float().numpy())
    np.testing.assert_array_equal(slots["v"].numpy(), torch_opt.state[p]["exp_avg_sq"].float().numpy())
    assert int(opt.iterations.numpy()) == 1

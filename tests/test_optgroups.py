"""Optimizer hyperparameters as state: checkpoints that carry them, and loads that must restore exactly or refuse.

Attacks: checkpoints whose hyperparameters are out of the constructor's range (``beta_1=1.5``, a NaN epsilon), loads
that leave slots from before the load beside the loaded ones.  References: the constructors' own checks (as
``torch.optim``'s), and the update rules written out in NumPy (Adam's first step moves each coordinate by exactly
``lr``), with ``torch.optim`` where it is installed.
"""

import numpy as np
import pytest

import tensorlib as tl

O = tl.optimizers


def _stepped(make, variables, steps: int = 3):
    """An optimizer from ``make()`` after ``steps`` steps on fixed gradients for ``variables``."""
    opt = make()
    for t in range(steps):
        opt.apply([tl.tensor(np.cos(np.arange(v.shape[0]) + t)) for v in variables], variables)
    return opt


# A hyperparameter out of its constructor's range, per optimizer: each had loaded silently and trained with it.
_OUT_OF_RANGE = [
    (lambda: O.Adam(0.1), "beta_1", 1.5, r"Adam: beta_1 must be in \[0, 1\), got 1.5"),
    (lambda: O.Adam(0.1), "beta_2", np.nan, r"Adam: beta_2 must be in \[0, 1\), got nan"),
    (lambda: O.AdamW(0.1), "epsilon", -1.0, r"AdamW: epsilon must be >= 0, got -1.0"),
    (lambda: O.SGD(0.1, momentum=0.9), "momentum", -0.5, r"SGD: momentum must be >= 0, got -0.5"),
    (lambda: O.RMSprop(0.1), "rho", 1.0, r"RMSprop: rho must be in \[0, 1\), got 1.0"),
    (lambda: O.Adagrad(0.1), "lr_decay", -1.0, r"Adagrad: lr_decay must be >= 0, got -1.0"),
    (lambda: O.Adadelta(1.0), "rho", 1.5, r"Adadelta: rho must be in \[0, 1\], got 1.5"),
    (lambda: O.Lion(0.01), "beta_2", 2.0, r"Lion: beta_2 must be in \[0, 1\], got 2.0"),
    (lambda: O.NAdam(0.1), "momentum_decay", np.inf * -1, r"NAdam: momentum_decay must be >= 0, got -inf"),
    (lambda: O.RAdam(0.1), "weight_decay", np.nan, r"RAdam: weight_decay must be >= 0, got nan"),
]


@pytest.mark.parametrize("make, field, bad, message", _OUT_OF_RANGE)
def test_a_checkpoint_with_a_hyperparameter_out_of_range_is_refused_and_changes_nothing(make, field, bad, message):
    w = tl.Variable(np.array([1.0, -2.0]))
    state = _stepped(make, [w]).state_dict()
    state[f"hyperparameters.{field}"] = np.float64(bad)
    target = _stepped(make, [w], steps=1)
    before = target.state_dict()
    with pytest.raises(ValueError, match=rf"'hyperparameters\.{field}' in the state: {message}"):
        target.load_state_dict(state)
    after = target.state_dict()
    assert after.keys() == before.keys()
    for name in before:
        np.testing.assert_array_equal(after[name], before[name], err_msg=name)
    # The same check on the attribute: setting it out of range is refused and keeps the old value.
    with pytest.raises(ValueError, match=message):
        setattr(target, field, bad)
    assert getattr(target, field) == before[f"hyperparameters.{field}"].item()


def test_a_checkpoint_file_with_a_bad_hyperparameter_is_refused_naming_the_optimizer(tmp_path):
    model = tl.nn.Dense(2, 1, seed=0, dtype="float64")
    opt = O.Adam(0.1)
    opt.build(model)
    path = tmp_path / "run.safetensors"
    state = tl.checkpoint.state_dict({"model": model, "opt": opt})
    state["opt.hyperparameters.beta_1"] = np.float64(-0.1)
    tl.save_variables(path, state)
    fresh_model, fresh_opt = tl.nn.Dense(2, 1, seed=1, dtype="float64"), O.Adam(0.1)
    kernel = fresh_model.kernel.numpy().copy()
    with pytest.raises(ValueError, match=r"'opt\.hyperparameters\.beta_1' in the file: Adam: beta_1 must be in"):
        tl.load_variables(path, {"model": fresh_model, "opt": fresh_opt})
    np.testing.assert_array_equal(fresh_model.kernel.numpy(), kernel)  # all or nothing
    assert fresh_opt.beta_1 == 0.9


def test_boundary_hyperparameters_that_the_constructor_takes_still_load():
    # Adadelta's rho and Lion's betas may be 1 (torch.optim.Adadelta, Keras' Lion); Adam's betas may be 0.
    for make, field, value in [(lambda: O.Adadelta(1.0), "rho", 1.0), (lambda: O.Lion(0.01), "beta_1", 1.0)]:
        w = tl.Variable(np.array([1.0, -2.0]))
        state = _stepped(make, [w]).state_dict()
        state[f"hyperparameters.{field}"] = np.float64(value)
        target = make()
        target.load_state_dict(state)
        assert getattr(target, field) == value


def _first_adam_step_is_lr(before: np.ndarray, after: np.ndarray, grad: np.ndarray, lr: float) -> None:
    """Adam's first step from zero moments moves each coordinate by exactly ``lr`` against its gradient's sign
    (``m_hat / sqrt(v_hat) = g / |g|``; epsilon=0 here), the NumPy reference of a variable without state."""
    np.testing.assert_allclose(after, before - lr * np.sign(grad), rtol=0, atol=1e-12)


def test_a_partial_load_restarts_the_slots_it_does_not_give():
    # An Adam that stepped a and b three times, loaded (strict=False) with a file saved for a alone after one step:
    # b kept its moments and its step counter of 3 beside a's loaded state, silently.  torch.optim's
    # load_state_dict replaces the whole state: b has none, and its next step is a first step.
    make = lambda: O.Adam(0.1, epsilon=0.0)
    a, b = tl.Variable(np.array([1.0, -1.0])), tl.Variable(np.array([2.0]))
    opt = _stepped(make, [a, b])
    saved = _stepped(make, [tl.Variable(np.array([1.0, -1.0]))], steps=1).state_dict()
    missing, _ = opt.load_state_dict(saved, strict=False)
    assert sorted(missing) == ["slots.1.m", "slots.1.step", "slots.1.v"]
    state = opt.state_dict()
    for name in ("slots.1.m", "slots.1.v", "slots.1.step"):
        np.testing.assert_array_equal(state[name], np.zeros_like(state[name]), err_msg=name)
    grad = np.array([-0.3])
    before = b.numpy().copy()
    opt.apply([tl.tensor(np.array([0.5, 0.5])), tl.tensor(grad)], [a, b])
    _first_adam_step_is_lr(before, b.numpy(), grad, 0.1)


def test_a_load_of_settings_alone_keeps_the_slots():
    # strict=False with a learning rate and a hyperparameter only (no step counter, no slot) changes those and
    # keeps the moments: the next step is Adam's third, written out in NumPy.
    w = tl.Variable(np.array([1.0, -1.0]))
    opt = O.Adam(0.1, epsilon=0.0)
    grads = [np.array([0.5, -2.0]), np.array([1.0, 0.3]), np.array([-0.4, 0.7])]
    for g in grads[:2]:
        opt.apply([tl.tensor(g)], [w])
    missing, _ = opt.load_state_dict(
        {"learning_rate": np.float64(0.05), "hyperparameters.beta_2": np.float64(0.99)}, strict=False
    )
    assert "slots.0.m" in missing
    before = w.numpy().copy()
    opt.apply([tl.tensor(grads[2])], [w])
    m = 0.9**2 * 0.1 * grads[0] + 0.9 * 0.1 * grads[1] + 0.1 * grads[2]
    v = 0.99 * (0.999 * 0.001 * grads[0] ** 2 + 0.001 * grads[1] ** 2) + 0.01 * grads[2] ** 2
    expected = before - 0.05 * (m / (1 - 0.9**3)) / np.sqrt(v / (1 - 0.99**3))
    np.testing.assert_allclose(w.numpy(), expected, rtol=1e-12)


def test_a_second_load_forgets_the_pending_slots_of_the_first():
    # A fresh optimizer keeps a file's slots until their variable is first seen; a second (partial) load of a
    # file without them kept the first file's, and the first step of b started from them.
    make = lambda: O.Adam(0.1, epsilon=0.0)
    both = _stepped(make, [tl.Variable(np.array([1.0])), tl.Variable(np.array([2.0]))]).state_dict()
    only_a = _stepped(make, [tl.Variable(np.array([1.0]))], steps=1).state_dict()
    opt = make()
    opt.load_state_dict(both)
    opt.load_state_dict(only_a, strict=False)
    assert not any(name.startswith("slots.1.") for name in opt.state_dict())
    a, b = tl.Variable(np.array([1.0])), tl.Variable(np.array([2.0]))
    grad = np.array([0.7])
    opt.apply([tl.tensor(np.array([0.1])), tl.tensor(grad)], [a, b])
    _first_adam_step_is_lr(np.array([2.0]), b.numpy(), grad, 0.1)


def test_a_load_restarts_buffers_the_files_flags_do_not_use():
    # SGD with momentum, loaded with a state saved without momentum: the old buffer stayed beside the loaded
    # state, and turning momentum on again resumed from it (torch.optim starts a new buffer from the gradient).
    w = tl.Variable(np.array([1.0, 2.0]))
    opt = _stepped(lambda: O.SGD(0.1, momentum=0.9), [w])
    opt.load_state_dict(_stepped(lambda: O.SGD(0.1), [tl.Variable(np.array([1.0, 2.0]))]).state_dict())
    assert opt.momentum == 0.0
    opt.momentum = 0.9
    before, grad = w.numpy().copy(), np.array([1.0, -2.0])
    opt.apply([tl.tensor(grad)], [w])
    np.testing.assert_allclose(w.numpy(), before - 0.1 * grad, rtol=0, atol=1e-12)  # buf = g at the first step


# ------------------------------------------------------------------ parameter groups
# Two groups per optimizer, each with settings away from the constructor's (torch.optim's names, as a torch user
# writes them), and the constructor's arguments.  Adagrad's group initial_accumulator_value is left out of the torch
# comparison: torch.optim.Adagrad starts every group's accumulator from the constructor's value (it reads the
# argument, not the group), where tensorlib starts a group's from its own, as the group says.
_GROUPS = {
    "SGD": (
        [{"lr": 0.05, "momentum": 0.5, "dampening": 0.2}, {"nesterov": True, "weight_decay": 0.1}],
        {"lr": 0.1, "momentum": 0.9},
    ),
    "Adam": ([{"lr": 0.01, "betas": (0.8, 0.95)}, {"amsgrad": True, "weight_decay": 0.1}], {"lr": 0.05, "eps": 1e-6}),
    "AdamW": ([{"lr": 0.01, "weight_decay": 0.3}, {"amsgrad": True, "maximize": True}], {"lr": 0.05}),
    "RMSprop": ([{"alpha": 0.9, "centered": True}, {"momentum": 0.5, "weight_decay": 0.1}], {"lr": 0.01}),
    "Adagrad": ([{"lr_decay": 0.01}, {"eps": 1e-5, "weight_decay": 0.1}], {"lr": 0.1}),
    "Adamax": ([{"betas": (0.7, 0.9)}, {"weight_decay": 0.1, "lr": 0.02}], {"lr": 0.05}),
    "NAdam": ([{"momentum_decay": 0.01}, {"weight_decay": 0.1, "decoupled_weight_decay": True}], {"lr": 0.05}),
    "RAdam": ([{"betas": (0.9, 0.9)}, {"weight_decay": 0.1, "decoupled_weight_decay": True}], {"lr": 0.05}),
    "Adadelta": ([{"rho": 0.8}, {"weight_decay": 0.1, "lr": 0.5}], {"lr": 1.0}),
    "Lion": ([{"betas": (0.8, 0.95)}, {"weight_decay": 0.1, "lr": 0.002}], {"lr": 0.01}),
}
_START = [np.array([0.3, -1.2, 0.8]), np.array([[0.5, -0.4], [1.1, 0.2]])]


def _group_grad(w: np.ndarray, t: int, i: int) -> np.ndarray:
    """The gradient of ``sum(scale * (w - target_t) ** 2)`` at step ``t`` for variable ``i``."""
    target = np.sin(np.arange(w.size).reshape(w.shape) + t + i)
    return 2.0 * (w - target) * np.linspace(0.5, 2.0, w.size).reshape(w.shape)


def _run_groups(name: str, steps: int = 20, traced: bool = True):
    """Two float64 variables in two groups of optimizer ``name``, stepped ``steps`` times; at step 10 the second
    group's lr is halved and the first group's betas/momentum-free settings changed through ``param_groups``."""
    groups, defaults = _GROUPS[name]
    variables = [tl.Variable(w.copy()) for w in _START]
    opt = getattr(O, name)([{**g, "params": [v]} for g, v in zip(groups, variables)], **defaults)
    step = tl.function(lambda gs: opt.apply(gs, variables)) if traced else (lambda gs: opt.apply(gs, variables))
    for t in range(steps):
        if t == 10:
            opt.param_groups[1]["lr"] *= 0.5
            opt.param_groups[0]["eps" if "epsilon" in opt.param_groups[0] else "lr"] *= 2.0
        step([tl.tensor(_group_grad(v.numpy(), t, i)) for i, v in enumerate(variables)])
    return variables, opt, step


@pytest.mark.parametrize("name", sorted(_GROUPS))
def test_each_group_steps_as_an_optimizer_of_its_own_settings(name):
    # The reference: one optimizer per group, made with that group's settings (each one checked against
    # torch.optim or NumPy in the other optimizer tests), given the same changes at step 10.
    variables, _, step = _run_groups(name)
    assert step.trace_count == 1  # a rate or epsilon written into a group is read at every call
    groups, defaults = _GROUPS[name]
    for i, (group, start) in enumerate(zip(groups, _START)):
        alone = tl.Variable(start.copy())
        single = getattr(O, name)([alone], **{**defaults, **group})
        for t in range(20):
            if t == 10:
                key = "lr" if i == 1 else ("eps" if "epsilon" in single.param_groups[0] else "lr")
                single.param_groups[0][key] *= 2.0 if i == 0 else 0.5
            single.apply([tl.tensor(_group_grad(alone.numpy(), t, i))], [alone])
        np.testing.assert_allclose(variables[i].numpy(), alone.numpy(), rtol=1e-13, atol=1e-15, err_msg=f"group {i}")


def test_groups_follow_the_numpy_update_rules():
    # SGD with momentum and Adam written out in NumPy, one group each with its own lr (and momentum/betas).
    a, b = tl.Variable(_START[0].copy()), tl.Variable(_START[1].copy())
    sgd = O.SGD([{"params": [a], "momentum": 0.5}, {"params": [b], "lr": 0.02}], lr=0.1, momentum=0.9)
    ref_a, ref_b, buf_a, buf_b = _START[0].copy(), _START[1].copy(), 0.0, 0.0
    for t in range(8):
        ga, gb = _group_grad(ref_a, t, 0), _group_grad(ref_b, t, 1)
        sgd.apply([tl.tensor(ga), tl.tensor(gb)], [a, b])
        buf_a, buf_b = 0.5 * buf_a + ga, 0.9 * buf_b + gb
        ref_a, ref_b = ref_a - 0.1 * buf_a, ref_b - 0.02 * buf_b
    np.testing.assert_allclose(a.numpy(), ref_a, rtol=1e-14)
    np.testing.assert_allclose(b.numpy(), ref_b, rtol=1e-14)
    w = tl.Variable(_START[0].copy())
    adam = O.Adam([{"params": [w], "lr": 0.03, "betas": (0.8, 0.9)}], lr=1.0)
    ref, m, v = _START[0].copy(), 0.0, 0.0
    for t in range(1, 9):
        g = _group_grad(ref, t, 0)
        adam.apply([tl.tensor(g)], [w])
        m, v = 0.8 * m + 0.2 * g, 0.9 * v + 0.1 * g * g
        ref = ref - 0.03 * (m / (1 - 0.8**t)) / (np.sqrt(v / (1 - 0.9**t)) + 1e-8)
    np.testing.assert_allclose(w.numpy(), ref, rtol=1e-13)


@pytest.mark.parametrize("name", sorted(set(_GROUPS) - {"Lion"}))
def test_groups_match_torch_optim(name):
    torch = pytest.importorskip("torch")
    variables, _, _ = _run_groups(name)
    groups, defaults = _GROUPS[name]
    params = [torch.tensor(w.copy(), requires_grad=True) for w in _START]
    default_dtype = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)  # torch.optim keeps NAdam's mu_product in it (float32 by default)
    try:
        opt = getattr(torch.optim, name)([{**g, "params": [p]} for g, p in zip(groups, params)], **defaults)
        for t in range(20):
            if t == 10:
                opt.param_groups[1]["lr"] *= 0.5
                opt.param_groups[0]["eps" if "eps" in opt.param_groups[0] else "lr"] *= 2.0
            for i, p in enumerate(params):
                p.grad = torch.tensor(_group_grad(p.detach().numpy(), t, i))
            opt.step()
    finally:
        torch.set_default_dtype(default_dtype)
    for i, (v, p) in enumerate(zip(variables, params)):
        np.testing.assert_allclose(v.numpy(), p.detach().numpy(), rtol=1e-12, atol=1e-14, err_msg=f"group {i}")


def test_param_groups_refuse_what_torch_refuses_and_more():
    a, b = tl.Variable(np.ones(2)), tl.Variable(np.ones(3))
    with pytest.raises(
        ValueError, match=r"Adam: variable .* is in parameter groups 0 and 1; a variable belongs to one"
    ):
        O.Adam([{"params": [a]}, {"params": [b, a]}])
    with pytest.raises(ValueError, match=r"SGD: got an empty parameter list"):
        O.SGD([], lr=0.1)
    with pytest.raises(TypeError, match=r"Adam: a parameter group of Adam has no setting \['momentum'\]"):
        O.Adam([{"params": [a], "momentum": 0.9}])
    with pytest.raises(ValueError, match=r"Adam: parameter group 0: beta_2 must be in \[0, 1\), got 1.0"):
        O.Adam([{"params": [a], "betas": (0.9, 1.0)}])
    with pytest.raises(TypeError, match=r"Adam: 'learning_rate' is given twice"):
        O.Adam([a], lr=0.1, learning_rate=0.2)
    with pytest.raises(TypeError, match=r"SGD: the parameters hold int 3 at \[0\]; parameters are tl.Variables"):
        O.SGD([3], lr=0.1)
    with pytest.raises(TypeError, match=r"SGD: variable .* has dtype int64; only float and complex variables are"):
        O.SGD([tl.Variable(np.array([1, 2]))], lr=0.1)
    opt = O.SGD([a], lr=0.1)
    with pytest.raises(ValueError, match=r"SGD.add_param_group: variable .* is in parameter groups 0 and 1"):
        opt.add_param_group({"params": [a]})
    with pytest.raises(ValueError, match=r"SGD.apply: variable .* is in no parameter group of this optimizer"):
        opt.apply([tl.tensor(np.ones(3))], [b])
    np.testing.assert_array_equal(b.numpy(), np.ones(3))  # refused before any change
    with pytest.raises(ValueError, match=r"SGD: momentum must be >= 0, got -1"):
        opt.param_groups[0]["momentum"] = -1
    with pytest.raises(KeyError, match=r"SGD.param_groups\[0\] has no 'betas'"):
        opt.param_groups[0]["betas"]
    with pytest.raises(TypeError, match=r"cannot be replaced; add the variables with add_param_group"):
        opt.param_groups[0]["params"] = [b]
    assert len(opt.param_groups) == 1 and opt.param_groups[0]["momentum"] == 0.0


def test_a_rate_given_as_an_array_or_a_variable_is_still_a_rate():
    # SGD(np.array(0.1)) had become "parameters" (a 0-d array is iterable) and failed: "iteration over a 0-d array".
    w = tl.Variable(np.array([1.0]))
    for rate in (np.array(0.5), np.float64(0.5), tl.Variable(np.float64(0.5))):
        opt = O.SGD(rate)
        opt.apply([tl.tensor([1.0])], [w])
        assert opt.learning_rate == 0.5
    np.testing.assert_allclose(w.numpy(), [-0.5])


def test_add_param_group_takes_the_constructors_settings_and_a_keras_optimizer_groups_too():
    # torch.optim: a group added later takes the constructor's settings where it gives none.
    a, b, c = (tl.Variable(np.array([1.0])) for _ in range(3))
    opt = O.SGD([a], lr=0.1, momentum=0.9)
    opt.param_groups[0]["lr"] = 0.3  # the group's, not the defaults
    opt.add_param_group({"params": [b], "momentum": 0.0})
    assert (opt.param_groups[1]["lr"], opt.param_groups[1]["momentum"]) == (0.1, 0.0)
    opt.apply([tl.tensor([1.0]), tl.tensor([1.0])], [a, b])
    np.testing.assert_allclose([a.numpy()[0], b.numpy()[0]], [1.0 - 0.3, 1.0 - 0.1], rtol=1e-15)
    # Made without parameters (Keras' way): group 0 is every variable no other group holds.
    keras = O.SGD(0.1)
    keras.apply([tl.tensor([1.0])], [a])
    assert [v is a for v in keras.param_groups[0]["params"]] == [True]
    keras.add_param_group({"params": [c], "lr": 0.5})
    with pytest.raises(ValueError, match=r"variable .* is in parameter groups 0 and 2"):
        keras.add_param_group({"params": [a]})
    keras.apply([tl.tensor([1.0]), tl.tensor([1.0])], [b, c])  # b is new: group 0's
    np.testing.assert_allclose([b.numpy()[0], c.numpy()[0]], [0.9 - 0.1, 1.0 - 0.5], rtol=1e-15)


def _two_group_adam(lr_0=0.05, lr_1=0.01):
    model = tl.nn.Sequential(tl.nn.Dense(3, 4, seed=0, dtype="float64"), tl.nn.Dense(4, 1, seed=1, dtype="float64"))
    opt = O.Adam(
        [{"params": model[0], "lr": lr_0}, {"params": model[1], "betas": (0.5, 0.9), "amsgrad": True}], lr=lr_1
    )
    return model, opt


def _train(model, opt, steps, first=0):
    x = np.linspace(-1.0, 1.0, 15).reshape(5, 3)
    for t in range(first, first + steps):
        with tl.GradientTape() as tape:
            loss = tl.sum((model(x) - np.cos(t)) ** 2)
        opt.apply(tape.gradient(loss, model.trainable_variables), model)


def test_a_checkpoint_restores_every_groups_settings_and_slots(tmp_path):
    # The uninterrupted run of 6 steps is the reference for 3 steps, a save, a restore into new objects made with
    # other settings, and 3 more steps.
    model, opt = _two_group_adam()
    _train(model, opt, 3)
    opt.param_groups[1]["lr"] = 0.02
    path = tmp_path / "run.safetensors"
    tl.save_variables(path, {"model": model, "opt": opt})
    _train(model, opt, 3, first=3)
    fresh_model, fresh_opt = _two_group_adam(lr_0=0.5, lr_1=0.5)
    fresh_opt.param_groups[1]["amsgrad"] = False
    tl.load_variables(path, {"model": fresh_model, "opt": fresh_opt})
    assert (fresh_opt.param_groups[1]["lr"], fresh_opt.param_groups[1]["betas"]) == (0.02, (0.5, 0.9))
    assert fresh_opt.param_groups[1]["amsgrad"] is True and fresh_opt.param_groups[0]["lr"] == 0.05
    _train(fresh_model, fresh_opt, 3, first=3)
    for path_, v in tl.checkpoint.state_dict(model).items():
        np.testing.assert_array_equal(tl.checkpoint.state_dict(fresh_model)[path_], v, err_msg=path_)
    # A state from an optimizer without the second group is refused (torch: "a different number of parameter
    # groups"), and so is a group's setting out of range; neither changes the optimizer.
    one_group = O.Adam(0.01)
    one_group.build(model)
    with pytest.raises(ValueError, match=r"missing from the state: \[.*'param_groups\.1\.hyperparameters\.beta_1'"):
        fresh_opt.load_state_dict(one_group.state_dict())
    state = fresh_opt.state_dict()
    state["param_groups.1.hyperparameters.beta_2"] = np.float64(1.5)
    state["param_groups.1.learning_rate"] = np.float64(-0.1)
    with pytest.raises(ValueError, match=r"'param_groups\.1\.hyperparameters\.beta_2' in the state: Adam: beta_2 must"):
        fresh_opt.load_state_dict(state)
    assert fresh_opt.param_groups[1]["beta_2"] == 0.9 and fresh_opt.param_groups[1]["lr"] == 0.02


def test_a_groups_rate_may_be_a_schedule_and_plateau_reduces_every_group():
    a, b = tl.Variable(np.array([0.0])), tl.Variable(np.array([0.0]))
    decay = O.StepDecay(1.0, step_size=2, gamma=0.5)
    opt = O.SGD([{"params": [a], "lr": decay}, {"params": [b]}], lr=0.1)
    step = tl.function(lambda: opt.apply([tl.tensor([-1.0]), tl.tensor([-1.0])], [a, b]))
    for _ in range(5):
        step()
    # NumPy: sum of 0.5 ** floor(t / 2) for t = 0..4, and 5 * 0.1.
    np.testing.assert_allclose([a.numpy()[0], b.numpy()[0]], [sum(0.5 ** (t // 2) for t in range(5)), 0.5])
    plateau = O.ReduceLROnPlateau(O.SGD([{"params": [a]}, {"params": [b], "lr": 0.4}], lr=1.0), factor=0.5, patience=0)
    plateau.step(1.0)
    plateau.step(1.0)
    assert [g["lr"] for g in plateau.optimizer.param_groups] == [0.5, 0.2]  # torch reduces each group's


def test_a_copy_of_an_optimizer_keeps_its_groups():
    import copy

    a, b = tl.Variable(np.array([1.0])), tl.Variable(np.array([1.0]))
    opt = O.SGD([{"params": [a]}, {"params": [b], "lr": 0.5}], lr=0.1)
    (a2, b2, opt2) = copy.deepcopy((a, b, opt))
    opt2.apply([tl.tensor([1.0]), tl.tensor([1.0])], [a2, b2])
    np.testing.assert_allclose([a2.numpy()[0], b2.numpy()[0]], [0.9, 0.5])
    np.testing.assert_array_equal([a.numpy()[0], b.numpy()[0]], [1.0, 1.0])


# ------------------------------------------------------------------ torch's schedulers, as schedules of the step
def _multistep(t, milestones, gamma):
    return gamma ** sum(t >= m for m in milestones)


def _linear(t, start, end, total):
    return start + (end - start) * min(t, total) / total


# (tensorlib schedule, NumPy formula of the step, torch scheduler) for a base rate of 0.8.
_SCHEDULES = {
    "MultiStepDecay": (
        lambda: O.MultiStepDecay(0.8, [3, 7, 7, 12], gamma=0.3),
        lambda t: 0.8 * _multistep(t, [3, 7, 7, 12], 0.3),
        lambda L, o: L.MultiStepLR(o, [3, 7, 7, 12], gamma=0.3),
    ),
    "LinearSchedule": (
        lambda: O.LinearSchedule(0.8, start_factor=0.1, end_factor=0.7, total_steps=9),
        lambda t: 0.8 * _linear(t, 0.1, 0.7, 9),
        lambda L, o: L.LinearLR(o, start_factor=0.1, end_factor=0.7, total_iters=9),
    ),
    "LambdaSchedule": (
        lambda: O.LambdaSchedule(0.8, lambda t: 0.9**t),
        lambda t: 0.8 * 0.9**t,
        lambda L, o: L.LambdaLR(o, lambda e: 0.9**e),
    ),
    "SequentialSchedule": (
        lambda: O.SequentialSchedule(
            [O.LinearSchedule(0.8, 0.2, 1.0, 4), O.ExponentialDecay(0.8, 1, 0.9), O.StepDecay(0.8, 3, 0.5)], [5, 12]
        ),
        lambda t: 0.8 * (_linear(t, 0.2, 1.0, 4) if t < 5 else 0.9 ** (t - 5) if t < 12 else 0.5 ** ((t - 12) // 3)),
        lambda L, o: L.SequentialLR(
            o, [L.LinearLR(o, 0.2, 1.0, 4), L.ExponentialLR(o, 0.9), L.StepLR(o, 3, 0.5)], milestones=[5, 12]
        ),
    ),
    "ChainedSchedule": (
        lambda: O.ChainedSchedule(
            [O.LinearSchedule(0.8, 0.2, 1.0, 4), O.ExponentialDecay(0.8, 1, 0.9), O.MultiStepDecay(0.8, [6, 9], 0.5)]
        ),
        lambda t: 0.8 * _linear(t, 0.2, 1.0, 4) * 0.9**t * _multistep(t, [6, 9], 0.5),
        lambda L, o: L.ChainedScheduler(
            [L.LinearLR(o, 0.2, 1.0, 4), L.ExponentialLR(o, 0.9), L.MultiStepLR(o, [6, 9], 0.5)]
        ),
    ),
    "CosineAnnealingWarmRestarts": (
        lambda: O.CosineDecayRestarts(0.8, 4, t_mul=2.0, alpha=0.05 / 0.8),
        None,
        lambda L, o: L.CosineAnnealingWarmRestarts(o, T_0=4, T_mult=2, eta_min=0.05),
    ),
    "CosineAnnealingLR": (  # up to T_max: past it torch's rate rises again along the cosine, Keras' stays
        lambda: O.CosineDecay(0.8, 10, alpha=0.1 / 0.8),
        lambda t: 0.1 + (0.8 - 0.1) * (1 + np.cos(np.pi * min(t, 10) / 10)) / 2,
        lambda L, o: L.CosineAnnealingLR(o, T_max=10, eta_min=0.1),
    ),
}


@pytest.mark.parametrize("name", sorted(n for n, case in _SCHEDULES.items() if case[1] is not None))
def test_torch_schedulers_as_schedules_follow_their_formulas_in_a_traced_step(name):
    make, formula, _ = _SCHEDULES[name]
    w = tl.Variable(np.array([0.0]))
    opt = O.SGD([w], lr=make())
    step = tl.function(lambda: opt.apply([tl.tensor([-1.0])], [w]))
    moved = []
    for _ in range(20):
        before = float(w[0])
        step()
        moved.append(float(w[0]) - before)  # the rate of this step: the gradient is -1
    np.testing.assert_allclose(moved, [formula(t) for t in range(20)], rtol=1e-13, atol=1e-15)
    assert step.trace_count == 1


@pytest.mark.parametrize("name", sorted(_SCHEDULES))
def test_schedules_match_torch_lr_schedulers(name):
    torch = pytest.importorskip("torch")
    import warnings

    make, _, make_torch = _SCHEDULES[name]
    p = torch.zeros(1, requires_grad=True)
    opt = torch.optim.SGD([p], lr=0.8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's "scheduler.step() before optimizer.step()" on construction
        scheduler = make_torch(torch.optim.lr_scheduler, opt)
        rates = []
        for _ in range(30):
            rates.append(opt.param_groups[0]["lr"])
            opt.step()
            scheduler.step()
    schedule = make()
    steps = 11 if name == "CosineAnnealingLR" else 30  # CosineDecay is Keras' past T_max
    np.testing.assert_allclose([float(schedule(t)) for t in range(steps)], rates[:steps], rtol=1e-13, atol=1e-15)


def test_schedule_arguments_are_checked():
    for make, message in [
        (lambda: O.MultiStepDecay(0.1, [2, -1]), r"MultiStepDecay: milestones\[1\] must be a whole number >= 0"),
        (lambda: O.LinearSchedule(0.1, start_factor=0.0), r"LinearSchedule: start_factor must be > 0"),
        (lambda: O.LinearSchedule(0.1, total_steps=0), r"LinearSchedule: total_steps must be a whole number >= 1"),
        (lambda: O.SequentialSchedule([O.StepDecay(0.1, 2)], [3]), r"SequentialSchedule: needs increasing milestones"),
        (lambda: O.ChainedSchedule([O.StepDecay(0.1, 2), O.StepDecay(0.2, 2)]), r"ChainedSchedule: needs schedules"),
    ]:
        with pytest.raises(ValueError, match=message):
            make()
    with pytest.raises(TypeError, match=r"LambdaSchedule: factor must be a callable of the step, got float"):
        O.LambdaSchedule(0.1, 0.5)

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
    make = lambda: O.Adam(0.1, epsilon=0.0)  # noqa: E731
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


def test_a_second_load_forgets_the_pending_slots_of_the_first():
    # A fresh optimizer keeps a file's slots until their variable is first seen; a second (partial) load of a
    # file without them kept the first file's, and the first step of b started from them.
    make = lambda: O.Adam(0.1, epsilon=0.0)  # noqa: E731
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

"""Adversarial tests of training (area "optadv2"): optimizers' hyperparameters changed between traced steps,
Variables assigned inside traced control flow, and optimizers, schedules and clipping as a TF 2 / JAX /
PyTorch user drives them.

References: the published update rules written here in NumPy (these run in CI) with the hyperparameters
of each step, ``torch.optim`` (param groups edited between steps) where installed, and for control flow
the same program run eagerly and by NumPy.
"""

import numpy as np
import pytest

import tensorlib as tl

O = tl.optimizers


# ---------------------------------------------------------------- hyperparameters changed between traced steps
def _numpy_steps(name: str, w, grads, lr: float, per_step: list, fixed: dict):
    """``w`` after the published update rule (PyTorch's forms; Keras' for Lion) with hyperparameters
    ``{**fixed, **per_step[i]}`` at step ``i``."""
    w = np.array(w, dtype=np.float64)
    m, v, v_max, buf, acc, delta = (np.zeros_like(w) for _ in range(6))
    for t, (g, changed) in enumerate(zip(grads, per_step), start=1):
        h = {**fixed, **changed}
        wd = h.get("weight_decay", 0.0)
        if name == "sgd":
            g = g + wd * w
            buf = g.copy() if t == 1 else h["momentum"] * buf + (1 - h["dampening"]) * g
            w = w - lr * (g + h["momentum"] * buf if h.get("nesterov") else buf)
        elif name in ("adam", "adamw"):
            if name == "adamw":
                w = w * (1 - lr * wd)
            else:
                g = g + wd * w
            b1, b2 = h["beta_1"], h["beta_2"]
            m, v = b1 * m + (1 - b1) * g, b2 * v + (1 - b2) * g * g
            v_max = np.maximum(v_max, v)
            w = w - lr * (m / (1 - b1**t)) / (np.sqrt((v_max if h.get("amsgrad") else v) / (1 - b2**t)) + h["epsilon"])
        elif name == "rmsprop":
            g = g + wd * w
            rho = h["rho"]
            v = rho * v + (1 - rho) * g * g
            m = rho * m + (1 - rho) * g  # the centered mean
            buf = h["momentum"] * buf + g / (np.sqrt(v - m * m) + h["epsilon"])
            w = w - lr * buf
        elif name == "adagrad":
            g = g + wd * w
            acc = acc + g * g
            w = w - lr / (1 + (t - 1) * h["lr_decay"]) * g / (np.sqrt(acc) + h["epsilon"])
        elif name == "adamax":
            g = g + wd * w
            b1 = h["beta_1"]
            m, v = b1 * m + (1 - b1) * g, np.maximum(h["beta_2"] * v, np.abs(g) + h["epsilon"])
            w = w - lr / (1 - b1**t) * m / v
        elif name == "adadelta":
            g = g + wd * w
            rho, eps = h["rho"], h["epsilon"]
            v = rho * v + (1 - rho) * g * g
            step = np.sqrt(delta + eps) / np.sqrt(v + eps) * g
            delta = rho * delta + (1 - rho) * step * step
            w = w - lr * step
        elif name == "lion":
            w = w * (1 - lr * wd)
            w = w - lr * np.sign(h["beta_1"] * m + (1 - h["beta_1"]) * g)
            m = h["beta_2"] * m + (1 - h["beta_2"]) * g
    return w


# (optimizer, its fixed arguments, the hyperparameters changed at every step: five values each)
CHANGING = {
    "sgd": (
        lambda: O.SGD(0.1, momentum=0.9, dampening=0.2, weight_decay=0.1),
        {"nesterov": False},
        {
            "momentum": [0.9, 0.5, 0.7, 0.3, 0.99],
            "dampening": [0.2, 0.4, 0.1, 0.5, 0.3],
            "weight_decay": [0.1, 0.3, 0.05, 0.2, 0.4],
        },
    ),
    "adam": (
        lambda: O.Adam(0.1, weight_decay=0.1, amsgrad=True),
        {"amsgrad": True},
        {
            "beta_1": [0.9, 0.5, 0.7, 0.3, 0.8],
            "beta_2": [0.999, 0.9, 0.99, 0.5, 0.95],
            "epsilon": [1e-8, 1e-3, 0.1, 1e-6, 0.5],
            "weight_decay": [0.1, 0.2, 0.05, 0.3, 0.1],
        },
    ),
    "adamw": (
        lambda: O.AdamW(0.1, weight_decay=0.1),
        {},
        {
            "beta_1": [0.9, 0.5, 0.7, 0.3, 0.8],
            "beta_2": [0.999, 0.9, 0.99, 0.5, 0.95],
            "epsilon": [1e-8, 1e-3, 0.1, 1e-6, 0.5],
            "weight_decay": [0.1, 0.5, 0.05, 0.3, 0.2],
        },
    ),
    "rmsprop": (
        lambda: O.RMSprop(0.05, momentum=0.5, centered=True, weight_decay=0.1),
        {},
        {
            "rho": [0.99, 0.5, 0.9, 0.7, 0.8],
            "momentum": [0.5, 0.9, 0.1, 0.3, 0.6],
            "epsilon": [1e-8, 1e-2, 0.1, 1e-3, 0.2],
            "weight_decay": [0.1, 0.2, 0.3, 0.05, 0.4],
        },
    ),
    "adagrad": (
        lambda: O.Adagrad(0.1, lr_decay=0.1, weight_decay=0.1),
        {},
        {
            "lr_decay": [0.1, 0.5, 0.2, 1.0, 0.3],
            "epsilon": [1e-10, 1e-2, 0.1, 1e-3, 0.5],
            "weight_decay": [0.1, 0.2, 0.3, 0.05, 0.4],
        },
    ),
    "adamax": (
        lambda: O.Adamax(0.1, weight_decay=0.1),
        {},
        {
            "beta_1": [0.9, 0.5, 0.7, 0.3, 0.8],
            "beta_2": [0.999, 0.5, 0.9, 0.7, 0.8],
            "epsilon": [1e-8, 1e-2, 0.1, 1e-3, 0.2],
            "weight_decay": [0.1, 0.2, 0.3, 0.05, 0.4],
        },
    ),
    "adadelta": (
        lambda: O.Adadelta(1.0, weight_decay=0.1),
        {},
        {
            "rho": [0.9, 0.5, 0.7, 0.3, 0.8],
            "epsilon": [1e-6, 1e-2, 0.1, 1e-3, 0.2],
            "weight_decay": [0.1, 0.2, 0.3, 0.05, 0.4],
        },
    ),
    "lion": (
        lambda: O.Lion(0.1, weight_decay=0.1),
        {},
        {
            "beta_1": [0.9, 0.5, 0.7, 0.3, 0.8],
            "beta_2": [0.99, 0.5, 0.9, 0.7, 0.8],
            "weight_decay": [0.1, 0.2, 0.3, 0.05, 0.4],
        },
    ),
}

W0 = np.array([1.0, -2.0, 0.5, 3.0])
GRADS = [np.array([0.5, -1.0, 2.0, 0.1]) * (k + 1) + np.array([0.0, 0.3, -0.7, 1.1]) * (-1) ** k for k in range(6)]


def _schedule(changing: dict) -> list:
    return [{name: values[i] for name, values in changing.items()} for i in range(5)]


@pytest.mark.parametrize("name", sorted(CHANGING))
def test_hyperparameters_set_between_traced_steps_neither_retrace_nor_go_stale(name):
    # Setting opt.beta_1 (momentum, weight_decay, ...) between traced steps traced the step again every time
    # (the values were baked into the graph; the learning rate, read from a Variable, did not retrace).  Now
    # each is read from a Variable at every call: five steps with five values trace once, and every step uses
    # its own values (the published rules in NumPy, with each step's values; eager steps alike, bit for bit).
    make, fixed, changing = CHANGING[name]
    per_step = _schedule(changing)
    results = []
    for traced in (False, True):
        w, opt = tl.Variable(W0.copy()), make()
        step = tl.function(lambda g: opt.apply([g], [w])) if traced else (lambda g: opt.apply([g], [w]))
        step(tl.tensor(GRADS[0]))  # (traced: the one trace)
        with tl.testing.no_retrace(step) if traced else _nothing():
            for values, g in zip(per_step[1:], GRADS[1:]):
                for attribute, value in values.items():
                    setattr(opt, attribute, value)
                step(tl.tensor(g))
        assert all(getattr(opt, a) == v for a, v in per_step[-1].items())  # read back as floats
        results.append(w.numpy())
    np.testing.assert_array_equal(results[1], results[0])
    np.testing.assert_allclose(
        results[1], _numpy_steps(name, W0, GRADS, opt.learning_rate, per_step, fixed), rtol=1e-12
    )


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


TORCH_NAMES = {
    "sgd": ("SGD", {"momentum": "momentum", "dampening": "dampening", "weight_decay": "weight_decay"}),
    "adam": ("Adam", {"epsilon": "eps", "weight_decay": "weight_decay"}),
    "adamw": ("AdamW", {"epsilon": "eps", "weight_decay": "weight_decay"}),
    "rmsprop": ("RMSprop", {"rho": "alpha", "momentum": "momentum", "epsilon": "eps", "weight_decay": "weight_decay"}),
    "adagrad": ("Adagrad", {"lr_decay": "lr_decay", "epsilon": "eps", "weight_decay": "weight_decay"}),
    "adamax": ("Adamax", {"epsilon": "eps", "weight_decay": "weight_decay"}),
    "adadelta": ("Adadelta", {"rho": "rho", "epsilon": "eps", "weight_decay": "weight_decay"}),
    "nadam": ("NAdam", {"epsilon": "eps", "weight_decay": "weight_decay", "momentum_decay": "momentum_decay"}),
    "radam": ("RAdam", {"epsilon": "eps", "weight_decay": "weight_decay"}),
}
CHANGING_TORCH = {
    **{k: v for k, v in CHANGING.items() if k != "lion"},
    "nadam": (
        lambda: O.NAdam(0.1, weight_decay=0.1),
        {},
        {
            "beta_1": [0.9, 0.5, 0.7, 0.3, 0.8],
            "beta_2": [0.999, 0.9, 0.99, 0.5, 0.95],
            "epsilon": [1e-8, 1e-3, 0.1, 1e-6, 0.5],
            "momentum_decay": [4e-3, 1.0, 0.1, 0.5, 2.0],
        },
    ),
    "radam": (
        lambda: O.RAdam(0.1, beta_2=0.9, weight_decay=0.1),
        {},
        {
            "beta_1": [0.9, 0.5, 0.7, 0.3, 0.8],
            "beta_2": [0.9, 0.95, 0.8, 0.99, 0.9],
            "epsilon": [1e-8, 1e-3, 0.1, 1e-6, 0.5],
        },
    ),
}


@pytest.mark.parametrize("name", sorted(CHANGING_TORCH))
def test_hyperparameters_set_between_traced_steps_match_torch_param_groups(name):
    torch = pytest.importorskip("torch")
    make, fixed, changing = CHANGING_TORCH[name]
    per_step = _schedule(changing)
    w, opt = tl.Variable(W0.copy()), make()
    step = tl.function(lambda g: opt.apply([g], [w]))
    torch_name, names = TORCH_NAMES[name]
    p = torch.tensor(W0.copy(), requires_grad=True)
    flags = {"adam": {"amsgrad": True}, "rmsprop": {"centered": True}}.get(name, {})
    theirs = getattr(torch.optim, torch_name)(
        [p], lr=opt.learning_rate, **{names[k]: getattr(opt, k) for k in names}, **flags
    )
    for i, g in enumerate(GRADS[:5]):
        group = theirs.param_groups[0]
        for attribute, value in per_step[i].items():
            setattr(opt, attribute, value)
            if attribute in names:
                group[names[attribute]] = value
        if "beta_1" in opt._hyperparameters:
            group["betas"] = (opt.beta_1, opt.beta_2)
        step(tl.tensor(g))
        p.grad = torch.tensor(g)
        theirs.step()
    assert step.trace_count == 1
    # torch.optim.NAdam keeps its product of momentum coefficients in float32 (a float64 slot here)
    np.testing.assert_allclose(w.numpy(), p.detach().numpy(), rtol=1e-6 if name == "nadam" else 1e-12, atol=1e-15)


def test_a_hyperparameter_that_picks_the_rule_still_retraces_and_matches_numpy():
    # RAdam's beta_2 <= 2/3 never rectifies (another rule) and weight_decay = 0 drops the decay: those retrace,
    # and the values used are still the new ones.
    w, opt = tl.Variable(W0.copy()), O.SGD(0.1, momentum=0.5, weight_decay=0.2)
    step = tl.function(lambda g: opt.apply([g], [w]))
    step(tl.tensor(GRADS[0]))
    opt.weight_decay = 0.0
    step(tl.tensor(GRADS[1]))
    assert step.trace_count == 2
    per_step = [{"weight_decay": 0.2}, {"weight_decay": 0.0}]
    expected = _numpy_steps("sgd", W0, GRADS[:2], 0.1, per_step, {"momentum": 0.5, "dampening": 0.0})
    np.testing.assert_allclose(w.numpy(), expected, rtol=1e-14)
    r = O.RAdam(0.1, beta_2=0.9)
    f = tl.function(lambda g: r.apply([g], [w]))
    f(tl.tensor(GRADS[0]))
    r.beta_2 = 0.6
    f(tl.tensor(GRADS[1]))
    assert f.trace_count == 2


def test_float32_and_float16_variables_read_the_new_values():
    # The update of a float32 (float16: float32) variable reads each hyperparameter cast once from float64,
    # 1 - beta_1 computed in float64 first, as a Python float's was: a step equals the float32 NumPy rule.
    for dtype in (np.float32, np.float16):
        w, opt = tl.Variable(W0.astype(dtype)), O.Adam(0.1)
        step = tl.function(lambda g: opt.apply([g], [w]))
        step(tl.tensor(GRADS[0].astype(dtype)))
        opt.beta_1, opt.epsilon = 0.5, 0.1
        step(tl.tensor(GRADS[1].astype(dtype)))
        assert step.trace_count == 1
        per_step = [{"beta_1": 0.9, "epsilon": 1e-8}, {"beta_1": 0.5, "epsilon": 0.1}]
        expected = _numpy_steps("adam", W0, GRADS[:2], 0.1, per_step, {"beta_2": 0.999})
        tol = 1e-6 if dtype == np.float32 else 1e-3
        np.testing.assert_allclose(w.numpy().astype(np.float64), expected, rtol=tol, atol=tol)

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


# ---------------------------------------------------------------- Variables assigned inside traced control flow
def _eager_and_traced(program, *args, calls: int = 2):
    """``program(*args, state)`` run eagerly and traced (``calls`` calls each) on fresh state: the results and
    the state's values after each call."""
    runs = []
    for traced in (False, True):
        state = {
            "v": tl.Variable(np.array([1.0, 2.0]), name="v"),
            "count": tl.Variable(np.int64(0), trainable=False, name="count"),
        }
        f = tl.function(lambda *a: program(*a, state)) if traced else (lambda *a: program(*a, state))
        rows = []
        for k in range(calls):
            out = f(*[a * (k + 1) for a in args])
            rows.append(([np.asarray(t) for t in tl.tree.leaves(out)], {n: s.numpy().copy() for n, s in state.items()}))
        runs.append(rows)
    return runs


def _assert_same_runs(runs):
    for (out_e, state_e), (out_t, state_t) in zip(*runs):
        assert len(out_e) == len(out_t)
        for a, b in zip(out_e, out_t):
            np.testing.assert_array_equal(b, a)
        for name in state_e:
            np.testing.assert_array_equal(state_t[name], state_e[name])


def _cond_program(x, state):
    v, count = state["v"], state["count"]

    def taken():
        v.assign(v * 2.0 + x)
        count.assign_add(np.int64(1))
        return tl.sum(v)  # reads the value just assigned

    return tl.cond(tl.sum(x) < 0, taken, lambda: tl.sum(v) * 0.0)


def _scan_program(x, state):
    v, count = state["v"], state["count"]

    def body(carry, xi):
        v.assign(v * 0.5 + xi)
        count.assign_add(np.int64(1))
        return carry + tl.sum(v), v * 1.0

    return tl.scan(body, tl.tensor(0.0, dtype="float64"), tl.stack([x, x * 2.0, -x]))


def _while_program(x, state):
    v, count = state["v"], state["count"]

    def body(i):
        v.assign(v + x)
        count.assign_add(np.int64(2))
        return i + 1

    # the predicate reads the Variable too: it sees the loop's value at each step
    return tl.while_loop(lambda i: tl.logical_and(i < 5, tl.sum(v) < 10.0), body, tl.tensor(0))


def _nested_program(x, state):
    v, count = state["v"], state["count"]

    def body(carry, xi):
        def add():
            v.assign(v + xi)
            count.assign_add(np.int64(1))
            return tl.tensor(1)

        counted = tl.switch(tl.cast(tl.sum(xi) > 0, "int64"), [lambda: tl.tensor(0), add])
        return carry + tl.sum(v), counted

    return tl.scan(body, tl.tensor(0.0, dtype="float64"), tl.stack([x, -x, x * 3.0]))


def _numpy_programs(name: str, x, v, count: int):
    """The programs above in NumPy: (results, v, count) after one call on ``v``, ``count``."""
    if name == "cond":
        if x.sum() < 0:
            v, count = v * 2.0 + x, count + 1
            return [v.sum()], v, count
        return [v.sum() * 0.0], v, count
    if name == "scan":
        total, ys = 0.0, []
        for xi in (x, 2.0 * x, -x):
            v, count = v * 0.5 + xi, count + 1
            total, ys = total + v.sum(), ys + [v]
        return [total, np.stack(ys)], v, count
    if name == "while":
        i = 0
        while i < 5 and v.sum() < 10.0:
            v, count, i = v + x, count + 2, i + 1
        return [i], v, count
    total, flags = 0.0, []
    for xi in (x, -x, 3.0 * x):
        flags.append(int(xi.sum() > 0))
        if flags[-1]:
            v, count = v + xi, count + 1
        total += v.sum()
    return [total, np.array(flags)], v, count


@pytest.mark.parametrize(
    "name, program",
    [("cond", _cond_program), ("scan", _scan_program), ("while", _while_program), ("nested", _nested_program)],
)
def test_variables_assigned_in_traced_control_flow(name, program):
    # Assigning a Variable inside a traced cond branch or loop body raised "return the new value from it and
    # assign after" (TensorFlow's tf.cond / tf.while_loop allow it).  Now the Variable is one more output of
    # the Cond (one more carry of a loop, which the body's reads see) and is assigned after the node: traced
    # equals eager bit for bit, the second call starts from the first one's values, and NumPy agrees.
    x = np.array([0.5, -1.5])
    runs = _eager_and_traced(program, tl.tensor(x))
    _assert_same_runs(runs)
    v, count = np.array([1.0, 2.0]), 0
    for k, (out, state) in enumerate(runs[1]):
        expected, v, count = _numpy_programs(name, x * (k + 1), v, count)
        for got, want in zip(out, expected):
            np.testing.assert_allclose(got, want, rtol=1e-14)
        np.testing.assert_allclose(state["v"], v, rtol=1e-14)
        assert state["count"] == count


def test_a_branch_may_return_the_variable_it_assigns():
    w = tl.Variable(np.ones(2), name="w")
    f = tl.function(lambda x: tl.cond(tl.sum(x) > 0, lambda a: w.assign(a * 3.0), lambda a: a, x))
    np.testing.assert_array_equal(f(tl.tensor(np.array([1.0, 2.0]))).numpy(), [3.0, 6.0])
    np.testing.assert_array_equal(f(tl.tensor(np.array([-1.0, -2.0]))).numpy(), [-1.0, -2.0])
    np.testing.assert_array_equal(w.numpy(), [3.0, 6.0])


def test_an_optimizer_steps_inside_a_traced_scan_as_eagerly():
    # Gradient accumulation style: one optimizer step per micro-batch inside tl.scan.  Every variable and slot
    # the step assigns is carried; the traced run equals the eager one bit for bit over three calls.
    rng = np.random.default_rng(0)
    xs, ys = rng.standard_normal((4, 6, 3)), rng.standard_normal((4, 6, 2))
    results = []
    for traced in (False, True):
        model, opt = tl.nn.Dense(3, 2, seed=0, dtype="float64", activation=tl.nn.tanh), O.Adam(0.05, amsgrad=True)

        def train(xs, ys):
            def body(total, batch):
                with tl.GradientTape() as tape:
                    loss = tl.mean(tl.square(model(batch[0]) - batch[1]))
                opt.apply(tape.gradient(loss, model.trainable_variables), model)
                return total + loss, loss

            return tl.scan(body, tl.tensor(0.0, dtype="float64"), (xs, ys))

        f = tl.function(train) if traced else train
        losses = [f(tl.tensor(xs), tl.tensor(ys))[1].numpy() for _ in range(3)]
        results.append((losses, model.kernel.numpy(), model.bias.numpy(), int(opt.iterations.numpy())))
        if traced:
            assert f.trace_count == 1
    for a, b in zip(results[0], results[1]):
        np.testing.assert_array_equal(np.asarray(b), np.asarray(a))
    assert results[1][3] == 12


def test_state_updated_in_control_flow_under_a_tape_keeps_the_gradient():
    # A counter and a running statistic (under stop_recording) updated in a scan body and a cond that a
    # recording tape wraps: the gradients are those of the same program without the state, and the state
    # matches the eager run.  The tape records the control-flow node as one op, which reads every Variable
    # of its branches: only the reads it would record eagerly refuse an assign.
    def program(x, state, with_state=True):
        v, count, m = state["v"], state["count"], state["m"]
        with tl.GradientTape() as tape:
            tape.watch(x)

            def body(carry, xi):
                if with_state:
                    count.assign_add(np.int64(1))
                    with tape.stop_recording():
                        m.assign(m * 0.5 + xi)
                return carry * xi + x * tl.sum(v), None

            out, _ = tl.scan(body, x, tl.stack([x, x * 2.0, -x]))
            branch = tl.cond(tl.sum(x) > 0, lambda: tl.sum(v * x), lambda: tl.sum(v))
            loss = tl.sum(out) + branch
        return tape.gradient(loss, [x, v])

    grads = []
    for traced in (False, True):
        state = {
            "v": tl.Variable(np.array([1.0, 2.0])),
            "count": tl.Variable(np.int64(0), trainable=False),
            "m": tl.Variable(np.zeros(2), trainable=False),
        }
        f = tl.function(lambda x: program(x, state)) if traced else (lambda x: program(x, state))
        grads.append([g.numpy() for g in f(tl.tensor(np.array([0.5, 1.5])))])
        assert int(state["count"].numpy()) == 3
        np.testing.assert_allclose(state["m"].numpy(), [0.125, 0.375], rtol=1e-15)  # (x / 2 + 2x) / 2 - x
    stateless = {"v": tl.Variable(np.array([1.0, 2.0])), "count": None, "m": None}
    expected = [g.numpy() for g in program(tl.tensor(np.array([0.5, 1.5])), stateless, with_state=False)]
    for got in grads:
        for g, e in zip(got, expected):
            np.testing.assert_allclose(g, e, rtol=1e-14)
    # and the pure program's gradient is right: central differences in float64
    x0 = np.array([0.5, 1.5])

    def value(x):
        out = x.copy()
        for xi in (x, 2.0 * x, -x):
            out = out * xi + x * 3.0
        return out.sum() + (np.dot([1.0, 2.0], x) if x.sum() > 0 else 3.0)

    numeric = [(value(x0 + e) - value(x0 - e)) / 2e-6 for e in np.eye(2) * 1e-6]
    np.testing.assert_allclose(expected[0], numeric, rtol=1e-7)


def test_assigns_a_recording_tape_forbids_are_refused_traced_as_eagerly():
    v = tl.Variable(np.array([1.0, 2.0]), name="v")
    u = tl.Variable(np.array([1.0, 2.0]), trainable=False, name="u")

    def doubled_in_a_branch(x):  # v (trainable) is read by the tape, then assigned
        with tl.GradientTape() as tape:
            tape.watch(x)
            y = tl.cond(tl.sum(x) > 0, lambda: (v.assign(v * 2.0), tl.sum(x))[1], lambda: tl.sum(x))
        return tape.gradient(y, x)

    def read_then_assigned_by_the_next_step(x):  # the tape records u * x, the next step assigns u
        with tl.GradientTape() as tape:
            tape.watch(x)
            carry, _ = tl.scan(
                lambda c, xi: (u.assign(xi * 2.0), c + tl.sum(u * x))[1:] + (None,), 0.0, tl.stack([x, x])
            )
        return tape.gradient(carry, x)

    for program in (doubled_in_a_branch, read_then_assigned_by_the_next_step):
        for f in (program, tl.function(program)):
            before = v.numpy().copy(), u.numpy().copy()
            with pytest.raises(
                RuntimeError, match=r"variable '[uv]' .* was read by a GradientTape that is still recording"
            ):
                f(tl.tensor(np.array([1.0, 1.0])))
            if f is not program:  # (a refused trace changes nothing)
                np.testing.assert_array_equal(v.numpy(), before[0])
                np.testing.assert_array_equal(u.numpy(), before[1])


def test_a_while_predicate_that_assigns_is_refused_naming_it():
    u = tl.Variable(0.0, trainable=False, name="u")
    f = tl.function(lambda x: tl.while_loop(lambda i: (u.assign(u + 1.0), i < x)[1], lambda i: i + 1, tl.tensor(0)))
    with pytest.raises(ValueError, match=r"tl.while_loop: cond_fn assigns variable 'u'"):
        f(tl.tensor(3))


def test_a_graph_with_a_variable_assigned_in_a_branch_saves_and_loads(tmp_path):
    # The branches' extra outputs (the assigned Variable's value) were outside their output structure, and
    # tl.graph.load refused the file: "the output structure * holds 1 tensors for 2 outputs".
    u = tl.Variable(np.array([1.0, 1.0]), name="u")
    f = tl.function(lambda x: tl.cond(tl.sum(x) > 0, lambda: (u.assign(u * x), tl.sum(u))[1], lambda: tl.sum(u)))
    graph = f.get_graph(tl.TensorSpec((2,), "float64"))
    graph.save(tmp_path / "g", include_captures=True)
    loaded = tl.graph.load(tmp_path / "g")
    assert float(loaded(tl.tensor(np.array([2.0, 3.0])))) == 5.0  # sum(u * x), the branch's own read of u
    assert float(loaded(tl.tensor(np.array([-2.0, -3.0])))) == 5.0  # the loaded graph's u was assigned [2, 3]
    assert float(f(tl.tensor(np.array([2.0, 3.0])))) == 5.0
    np.testing.assert_array_equal(u.numpy(), [2.0, 3.0])


# ---------------------------------------------------------------- the optimizers against torch.optim, traced
TORCH_CASES = [
    ("SGD", dict(momentum=0.9, nesterov=True, weight_decay=0.1), {}),
    ("SGD", dict(momentum=0.9, dampening=0.3, weight_decay=0.1), {}),
    ("Adam", dict(weight_decay=0.1, amsgrad=True), {}),
    ("AdamW", dict(weight_decay=0.1, amsgrad=True), {}),
    ("RMSprop", dict(rho=0.9, momentum=0.5, centered=True, weight_decay=0.1), {"rho": "alpha"}),
    ("Adagrad", dict(lr_decay=0.1, weight_decay=0.1, initial_accumulator_value=0.2), {}),
    ("Adamax", dict(weight_decay=0.1), {}),
    ("RAdam", dict(weight_decay=0.1, decoupled_weight_decay=True), {}),
    ("Adadelta", dict(weight_decay=0.1), {}),
]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name, ours, renamed", TORCH_CASES)
def test_traced_steps_with_none_and_zero_gradients_match_torch(name, ours, renamed, dtype):
    # Ten traced steps of two variables, one of which gets no gradient (None) on some steps and the other an
    # all-zero one on others: torch.optim skips a parameter whose .grad is None (its state and step count
    # wait), and steps one with a zero gradient.
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    w0 = [rng.standard_normal((3, 2)).astype(dtype), rng.standard_normal(4).astype(dtype)]
    grads = []
    for k in range(10):
        g = [rng.standard_normal((3, 2)).astype(dtype), rng.standard_normal(4).astype(dtype)]
        g[1] = None if k % 3 == 1 else g[1]
        g[0] = np.zeros_like(g[0]) if k % 4 == 2 else g[0]
        grads.append(g)
    variables = [tl.Variable(w.copy()) for w in w0]
    opt = getattr(O, name)(0.05, **ours)
    step = tl.function(lambda g: opt.apply(g, variables))
    params = [torch.tensor(w.copy(), requires_grad=True) for w in w0]
    theirs_args = {renamed.get(k, k): v for k, v in ours.items()}
    theirs = getattr(torch.optim, name)(params, lr=0.05, **theirs_args)
    for g in grads:
        step([None if x is None else tl.tensor(x) for x in g])
        for p, x in zip(params, g):
            p.grad = None if x is None else torch.tensor(x)
        theirs.step()
    tol = 1e-12 if dtype == "float64" else 2e-6
    for v, p in zip(variables, params):
        np.testing.assert_allclose(v.numpy(), p.detach().numpy(), rtol=tol, atol=tol)

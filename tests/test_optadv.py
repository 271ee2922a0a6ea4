"""Adversarial tests of optimizers, clipping, checkpoints and Modules (area "optadv").

Attacks: copies of a model with its optimizer, clipping at extreme ``clip_norm``, checkpoint paths
(symlinks, bytes) and the names an optimizer gives its slots.  References: the original object's own
trajectory (a copy must follow it step for step), the clipping formula written in NumPy, the bytes on
disk, and PyTorch (``torch.optim`` deep copies, ``clip_grad_norm_``) where it is installed.
"""

import copy
import os
import pickle

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tensorlib as tl

O = tl.optimizers


def _train_step(model, opt, x):
    with tl.GradientTape() as tape:
        loss = tl.sum(tl.square(model(x)))
    opt.apply(tape.gradient(loss, model.trainable_variables), model)


def _kernel_trajectory(model, opt, x, steps=3):
    out = []
    for _ in range(steps):
        _train_step(model, opt, x)
        out.append(np.concatenate([v.numpy().ravel() for v in tl.tree.leaves(model.variables)]))
    return np.array(out)


OPTIMIZERS = [
    lambda: O.SGD(0.05, momentum=0.9, nesterov=True),
    lambda: O.Adam(0.05, amsgrad=True),
    lambda: O.AdamW(0.05),
    lambda: O.RMSprop(0.01, centered=True, momentum=0.5),
    lambda: O.Adagrad(0.1, lr_decay=0.1),
]


@pytest.mark.parametrize("make_opt", OPTIMIZERS)
@pytest.mark.parametrize("how", ["deepcopy", "pickle"])
def test_copy_of_model_and_optimizer_follows_the_original(make_opt, how):
    # A copy of (model, optimizer) must carry the slots over: the copy's optimizer had found no slot for
    # the copied variables (it looked them up by the originals' ids), started from zero moments under
    # new keys ("kernel/kernel"), and its trajectory left the original's.
    x = tl.tensor(np.linspace(-1.0, 1.0, 12).reshape(4, 3))
    model, opt = tl.nn.Dense(3, 2, seed=0, dtype="float64"), make_opt()
    _kernel_trajectory(model, opt, x, steps=2)
    copied = copy.deepcopy((model, opt)) if how == "deepcopy" else pickle.loads(pickle.dumps((model, opt)))
    expected = _kernel_trajectory(model, opt, x)
    got = _kernel_trajectory(*copied, x)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=0)
    assert sorted(copied[1].variables["slots"]) == sorted(opt.variables["slots"]) == ["bias", "kernel"]
    # The copy is independent: its steps did not move the original's slots, nor the other way.
    assert copied[1].variables["slots"]["kernel"] is not opt.variables["slots"]["kernel"]


def test_copied_optimizer_alone_keeps_serving_the_original_variables():
    # copy.deepcopy(opt) alone (the variables not copied) is a second optimizer state for the same
    # variables, as torch's deepcopy of an optimizer with its params in the memo.
    w = tl.Variable(np.array([1.0, -2.0]))
    opt = O.Adam(0.1)
    opt.apply([tl.tensor([1.0, 2.0])], [w])
    twin = copy.deepcopy(opt)
    twin_w = tl.Variable(w.numpy())
    memo = {id(w): twin_w}
    twin2 = copy.deepcopy(opt, memo)
    opt.apply([tl.tensor([0.5, 0.5])], [w])
    twin2.apply([tl.tensor([0.5, 0.5])], [twin_w])
    np.testing.assert_allclose(twin_w.numpy(), w.numpy(), rtol=1e-15)
    assert sorted(twin.variables["slots"]) == ["0"]


# ------------------------------------------------------------------ clipping
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "complex64"])
@pytest.mark.parametrize("clip_norm", [1e5, 1e39, 1e300, float("inf")])
def test_clip_by_norm_past_the_norm_changes_nothing(dtype, clip_norm):
    # clip_norm=1e50 for a float32 t was inf in float32 and t * inf / inf made every value NaN; a
    # clip_norm above the norm scales by min(1, clip_norm / norm) = 1 (PyTorch's clip_grad_norm_, and
    # clip_by_global_norm here).
    t = np.array([[3.0, -4.0], [0.5, 0.0]], dtype)
    out = O.clip_by_norm(tl.tensor(t), clip_norm)
    assert out.dtype == t.dtype
    np.testing.assert_array_equal(out.numpy(), t)
    clipped, norm = O.clip_by_global_norm([tl.tensor(t)], clip_norm)
    np.testing.assert_array_equal(clipped[0].numpy(), t)
    np.testing.assert_allclose(float(norm), np.linalg.norm(t.astype(np.complex128)), rtol=1e-3)


def test_clip_by_norm_against_the_formula_over_axes():
    rng = np.random.default_rng(3)
    t = rng.normal(size=(4, 5)) * 10.0
    for clip_norm in (1e-3, 1.0, 7.5, 1e3, 1e200):
        for axes in (None, 0, 1, (0, 1)):
            norm = np.sqrt((t * t).sum(axis=axes, keepdims=True))
            expected = t * np.minimum(1.0, clip_norm / norm)
            np.testing.assert_allclose(O.clip_by_norm(tl.tensor(t), clip_norm, axes=axes).numpy(), expected, rtol=1e-13)


@given(
    st.sampled_from(["float16", "float32", "float64"]),
    st.lists(st.integers(0, 4), min_size=0, max_size=3),
    st.floats(1e-3, 1e300),
    st.integers(0, 2**31),
)
def test_clipping_against_the_numpy_formula(dtype, shape, clip_norm, seed):
    # clip_norm * t / max(norm, clip_norm), the norm in float64; a clip_norm past the dtype's range is
    # no clipping, never NaN.
    t = (np.random.default_rng(seed).normal(size=shape) * 3.0).astype(dtype)
    exact = t.astype(np.float64)
    norm = np.sqrt((exact * exact).sum())
    expected = exact * min(1.0, clip_norm / norm) if norm > 0 else exact
    rtol = {"float16": 2e-3, "float32": 2e-6, "float64": 1e-12}[dtype]
    out = O.clip_by_norm(tl.tensor(t), clip_norm)
    assert out.dtype == dtype
    np.testing.assert_allclose(out.numpy().astype(np.float64), expected, rtol=rtol, atol=1e-300)
    clipped, got_norm = O.clip_by_global_norm([tl.tensor(t), None], clip_norm)
    np.testing.assert_allclose(clipped[0].numpy().astype(np.float64), expected, rtol=rtol, atol=1e-300)
    np.testing.assert_allclose(float(got_norm), norm, rtol=rtol)


def test_clip_by_norm_matches_torch_for_huge_clip_norm():
    torch = pytest.importorskip("torch")
    g = np.array([3.0, 4.0], np.float32)
    p = torch.zeros(2, requires_grad=True)
    p.grad = torch.tensor(g)
    torch.nn.utils.clip_grad_norm_([p], 1e50)
    np.testing.assert_array_equal(O.clip_by_norm(tl.tensor(g), 1e50).numpy(), p.grad.numpy())


# ------------------------------------------------------------------ checkpoint files
def test_save_through_a_symlink_updates_its_target(tmp_path):
    # The atomic rename replaced the link itself by a new file: the link's target (the file the user's
    # other paths read) kept the old checkpoint.  open(path, "w"), torch.save and safetensors' save_file
    # all write through the link.
    real = tmp_path / "run" / "ckpt-1.safetensors"
    real.parent.mkdir()
    link = tmp_path / "latest.safetensors"
    tl.save_variables(real, {"w": tl.Variable([1.0, 2.0])})
    link.symlink_to(real)
    tl.save_variables(link, {"w": tl.Variable([5.0, 6.0])})
    assert link.is_symlink() and os.path.samefile(link, real)
    np.testing.assert_array_equal(tl.load_variables(real)["w"].numpy(), [5.0, 6.0])
    assert sorted(p.name for p in real.parent.iterdir()) == ["ckpt-1.safetensors"]  # no temporary left


def test_save_through_a_dangling_symlink_creates_its_target(tmp_path):
    real, link = tmp_path / "new.safetensors", tmp_path / "link.safetensors"
    link.symlink_to(real)
    tl.save_variables(link, {"w": tl.Variable([3.0])})
    assert link.is_symlink()
    np.testing.assert_array_equal(tl.load_variables(real)["w"].numpy(), [3.0])


def test_bytes_paths_save_and_load(tmp_path):
    # A bytes path (os.fspath accepts it) failed in os.path.join with "Can't mix strings and bytes".
    path = os.fsencode(os.path.join(tmp_path, "ckpt-ü.safetensors"))
    tl.save_variables(path, {"w": tl.Variable(np.array([1.5, -2.0]))})
    w = tl.Variable(np.zeros(2))
    tl.load_variables(path, {"w": w})
    np.testing.assert_array_equal(w.numpy(), [1.5, -2.0])
    assert os.listdir(tmp_path) == ["ckpt-ü.safetensors"]


# ------------------------------------------------------------------ optimizer checkpoints
@pytest.mark.parametrize("how", ["alone", "dict key", "collision"])
def test_optimizer_with_dotted_variable_names_saves_and_resumes(tmp_path, how):
    # A variable named "fc1.weight" (PyTorch's naming) given alone keys its slots by its name, and
    # save_variables refused the optimizer ("key 'fc1.weight' under 'slots' contains '.'"): no
    # checkpoint of its state could be written.  Slot keys now never hold the separator.
    def setup():
        w = tl.Variable(np.array([1.0, -2.0, 0.5]), name="fc1.weight")
        opt = O.Adam(0.1)
        return w, opt

    def step(w, opt, g):
        g = tl.tensor(g)
        if how == "alone":
            opt.apply(g, w)
        elif how == "dict key":
            opt.apply({"fc1.weight": g}, {"fc1.weight": w})
        else:  # the same path "0" in two calls: the second variable's key gets its name appended
            opt.apply([g * 0.0], [other[opt]])
            opt.apply([g], [w])

    other = {}
    w, opt = setup()
    other[opt] = tl.Variable(np.zeros(3), name="b.other")
    grads = [np.array([0.3, -1.0, 2.0]) * (k + 1) for k in range(4)]
    for g in grads[:2]:
        step(w, opt, g)
    path = tmp_path / "opt.safetensors"
    tl.save_variables(path, opt)
    assert not any("." in key for key in opt.variables["slots"])
    w2, opt2 = setup()
    w2.assign(w.numpy())
    other[opt2] = tl.Variable(other[opt].numpy(), name="b.other")
    tl.load_variables(path, opt2)
    for g in grads[2:]:
        step(w, opt, g)
        step(w2, opt2, g)
    np.testing.assert_array_equal(w2.numpy(), w.numpy())
    assert int(opt2.iterations.numpy()) == int(opt.iterations.numpy())


# ------------------------------------------------------------------ one variable twice
def test_traced_step_refuses_one_variable_with_two_different_gradients():
    # Eagerly, [1, 1] and [2, 2] for one variable is a ValueError; traced, the values cannot be compared
    # and the step silently used the first and dropped the second ([0.9, 1.9] after SGD(0.1)).
    w = tl.Variable(np.array([1.0, 2.0]), name="w")
    opt = O.SGD(0.1)
    step = tl.function(lambda g: opt.apply([g, g * 2.0], [w, w]))
    with pytest.raises(ValueError, match=r"SGD.apply: variable 'w' appears at \[0\] and \[1\] with different"):
        step(tl.tensor([1.0, 1.0]))
    np.testing.assert_array_equal(w.numpy(), [1.0, 2.0])
    assert int(opt.iterations.numpy()) == 0


def test_traced_step_takes_one_variable_twice_with_the_same_gradient():
    # A shared layer: tape.gradient gives the one gradient for both paths; traced as eager, it is applied
    # once (torch.optim steps a parameter once).
    def run(traced):
        w = tl.Variable(np.array([1.0, 2.0]))
        opt = O.SGD(0.1, momentum=0.9)

        def step(x):
            with tl.GradientTape() as tape:
                loss = tl.sum(w * w * x)
            opt.apply(tape.gradient(loss, {"a": w, "b": [w]}), {"a": w, "b": [w]})

        f = tl.function(step) if traced else step
        for _ in range(3):
            f(tl.tensor(np.array([1.0, 3.0])))
        return w.numpy()

    expected = np.array([1.0, 2.0])
    buf = np.zeros(2)
    for _ in range(3):
        buf = 0.9 * buf + 2 * expected * np.array([1.0, 3.0])
        expected = expected - 0.1 * buf
    np.testing.assert_allclose(run(False), expected, rtol=1e-14)
    np.testing.assert_allclose(run(True), expected, rtol=1e-14)


def test_optimizer_variables_are_a_new_dict_each_time():
    # variables["slots"][key] was the optimizer's own dict of slots: popping "step" from it (or
    # replacing "m") broke the optimizer's next step.
    w = tl.Variable(np.array([1.0, -1.0]))
    opt = O.Adam(0.1)
    opt.apply([tl.tensor([1.0, 2.0])], [w])
    state = opt.variables
    state["slots"]["0"].pop("step")
    state["slots"]["0"]["m"] = tl.Variable(np.full(2, 100.0))
    state["slots"].clear()
    assert sorted(opt.variables["slots"]["0"]) == ["m", "step", "v"]
    opt.apply([tl.tensor([1.0, 2.0])], [w])
    # Two Adam steps with g = [1, 2]: each moves by lr * sign(g) (m_hat / sqrt(v_hat) = 1).
    np.testing.assert_allclose(w.numpy(), [0.8, -1.2], rtol=1e-6)


# ------------------------------------------------------------------ learning rates
def test_learning_rate_callable_of_no_arguments_keras_form():
    # Keras takes "a callable that takes no arguments and returns the actual value to use"; the first
    # step raised "<lambda>() takes 0 positional arguments but 1 was given".
    rates = iter([0.5, 0.25, 0.125])
    current = {"lr": None}

    def lr():
        current["lr"] = next(rates)
        return current["lr"]

    w = tl.Variable(np.array([1.0, 2.0]))
    opt = O.SGD(lr, momentum=0.5)
    assert opt.learning_rate is lr
    expected, buf = np.array([1.0, 2.0]), np.zeros(2)
    for g in ([1.0, -1.0], [2.0, 0.5], [0.0, 3.0]):
        opt.apply([tl.tensor(g)], [w])
        buf = 0.5 * buf + np.array(g)
        expected = expected - current["lr"] * buf
        np.testing.assert_allclose(w.numpy(), expected, rtol=1e-15)


def test_learning_rate_no_argument_callable_of_a_variable_traced():
    lr_var = tl.Variable(np.float64(0.5))
    w = tl.Variable(np.array([1.0]))
    opt = O.SGD(lambda: lr_var)
    step = tl.function(lambda g: opt.apply([g], [w]))
    step(tl.tensor([1.0]))
    lr_var.assign(0.25)
    step(tl.tensor([1.0]))
    np.testing.assert_allclose(w.numpy(), [1.0 - 0.5 - 0.25], rtol=1e-15)


def test_warmup_after_a_no_argument_callable_and_schedules_still_take_the_step():
    s = O.Warmup(lambda: 0.5, warmup_steps=4)
    np.testing.assert_allclose([float(s(t)) for t in (0, 1, 3, 10)], [0.125, 0.25, 0.5, 0.5], rtol=1e-15)
    # A callable with a default step, or *args, is a schedule of the step.
    for fn in (lambda step=0.0: 1.0 / (1.0 + step), lambda *a: 1.0 / (1.0 + a[0])):
        w = tl.Variable(np.array([0.0]))
        opt = O.SGD(fn)
        for _ in range(3):
            opt.apply([tl.tensor([-1.0])], [w])
        np.testing.assert_allclose(w.numpy(), [1.0 + 1 / 2 + 1 / 3], rtol=1e-15)


def test_learning_rate_callable_of_two_arguments_names_itself():
    w = tl.Variable(np.array([0.0]))
    with pytest.raises(TypeError, match="positional argument"):
        O.SGD(lambda a, b: 0.1).apply([tl.tensor([1.0])], [w])


@pytest.mark.parametrize("rate", [0.1, 1e-3, 0.3])
def test_schedule_returning_a_python_float_is_exact_for_float64(rate):
    # A schedule returning 0.1 became 0.10000000149011612 (the Python float went through float32 before
    # the cast to float64), so a float64 model stepped by a rate 1.5e-8 off, where the constant 0.1 and
    # torch.optim.lr_scheduler.LambdaLR (Python floats) step by 0.1 exactly.
    w0 = np.array([1.0, -3.0, 0.7])
    g = np.array([0.25, 2.0, -1.5])
    for lr in (lambda step: rate, lambda: rate, O.Warmup(lambda step: rate, 1)):
        w = tl.Variable(w0.copy())
        O.SGD(lr).apply([tl.tensor(g)], [w])
        np.testing.assert_array_equal(w.numpy(), w0 - rate * g)


def _trained_and_restored(tmp_path):
    """A Dense and its Adam after one step, and a fresh pair restored from their checkpoint."""
    x = tl.tensor(np.linspace(-1.0, 1.0, 6).reshape(2, 3))
    model, opt = tl.nn.Dense(3, 2, seed=0, dtype="float64"), O.Adam(0.1)
    _train_step(model, opt, x)
    path = tmp_path / "ckpt.safetensors"
    tl.save_variables(path, {"model": model, "opt": opt})
    fresh, fresh_opt = tl.nn.Dense(3, 2, seed=1, dtype="float64"), O.Adam(0.1)
    tl.load_variables(path, {"model": fresh, "opt": fresh_opt})
    return x, model, opt, fresh, fresh_opt


def test_resuming_with_another_structure_warns_of_unmatched_slots(tmp_path):
    # Saved after apply(grads, model) (keys "kernel", "bias"), resumed with apply_gradients of a list
    # (keys "0", "1"): the restored moments matched nothing, the step started from zero moments with the
    # restored step count, and nothing said so.
    x, model, opt, fresh, fresh_opt = _trained_and_restored(tmp_path)
    variables = [fresh.kernel, fresh.bias]
    grads = [tl.tensor(np.ones((3, 2))), tl.tensor(np.ones(2))]
    with pytest.warns(UserWarning, match=r"Adam.apply: the checkpoint's slots for \['bias', 'kernel'\] match no"):
        fresh_opt.apply_gradients(zip(grads, variables))


def test_resuming_with_the_same_structure_or_a_new_layer_is_silent(tmp_path, recwarn):
    x, model, opt, fresh, fresh_opt = _trained_and_restored(tmp_path)
    head = tl.Variable(np.ones(2), name="head")
    with tl.GradientTape() as tape:
        loss = tl.sum(tl.square(fresh(x))) + tl.sum(head)
    grads = tape.gradient(loss, {"kernel": fresh.kernel, "bias": fresh.bias, "head": head})
    fresh_opt.apply(grads, {"kernel": fresh.kernel, "bias": fresh.bias, "head": head})  # a new variable "head"
    _train_step(model, opt, x)
    np.testing.assert_allclose(fresh.kernel.numpy(), model.kernel.numpy(), rtol=1e-13)
    assert not [w for w in recwarn if issubclass(w.category, UserWarning)]


def test_load_of_a_missing_file_names_the_function_and_path(tmp_path):
    path = tmp_path / "nope.safetensors"
    with pytest.raises(FileNotFoundError, match=r"load_variables: .*nope\.safetensors") as info:
        tl.load_variables(path, {"w": tl.Variable([1.0])})
    assert info.value.errno == 2 and info.value.filename == str(path)


def test_load_of_an_unreadable_file_is_the_os_error_not_a_format_error(tmp_path, monkeypatch):
    # A file the process may not read was reported as "not a readable safetensors file" (a ValueError
    # about its format); it is the OS's PermissionError, naming the function and the path.  (The tests
    # run as root here, where chmod 0 does not stop a read, so the reader's answer is simulated.)
    import errno

    import safetensors

    path = tmp_path / "locked.safetensors"
    tl.save_variables(path, {"w": tl.Variable([1.0])})

    def refuse(file, *args, **kwargs):
        raise PermissionError(errno.EACCES, "Permission denied", os.fspath(file))

    monkeypatch.setattr(safetensors, "safe_open", refuse)
    w = tl.Variable([5.0])
    with pytest.raises(
        PermissionError, match=r"load_variables: cannot read the checkpoint \(Permission denied\).*locked\.safetensors"
    ):
        tl.load_variables(path, {"w": w})
    assert w.numpy().tolist() == [5.0]


def test_global_norm_and_clipping_take_numbers_and_arrays_as_leaves():
    # global_norm([3.0, 4.0]) raised AttributeError "'float' object has no attribute 'dtype'"; TensorFlow's
    # global_norm converts each entry (5.0), and an array entry already worked.
    assert float(O.global_norm([3.0, 4.0])) == 5.0
    assert float(O.global_norm([np.array([3.0]), [4]])) == 5.0
    clipped, norm = O.clip_by_global_norm([3.0, {"a": np.array([4.0])}, None], 1.0)
    assert float(norm) == 5.0 and clipped[2] is None
    np.testing.assert_allclose([float(clipped[0]), float(clipped[1]["a"][0])], [0.6, 0.8], rtol=1e-6)
    with pytest.raises(TypeError, match=r"clip_by_global_norm: entry \[1\] has dtype int64"):
        O.clip_by_global_norm([1.0, 2], 1.0)


def test_global_norm_matches_tensorflow_for_python_numbers():
    tf = pytest.importorskip("tensorflow")
    values = [3.0, 4.0, -12.0]
    np.testing.assert_allclose(float(O.global_norm(values)), float(tf.linalg.global_norm(values)), rtol=1e-6)


@pytest.mark.parametrize("mode", [0o600, 0o640, 0o444])
def test_overwriting_a_checkpoint_keeps_its_permissions(tmp_path, mode):
    # The new file renamed over the old one had the umask's mode (0o644): a checkpoint kept private with
    # chmod 600 became readable by everyone at the next save; open(path, "w") and torch.save keep the
    # existing file's mode.
    path = tmp_path / "private.safetensors"
    tl.save_variables(path, {"w": tl.Variable([1.0])})
    os.chmod(path, mode)
    tl.save_variables(path, {"w": tl.Variable([2.0])})
    assert os.stat(path).st_mode & 0o7777 == mode
    assert tl.load_variables(path)["w"].numpy().tolist() == [2.0]


def test_a_new_checkpoint_gets_the_umask_mode(tmp_path):
    old = os.umask(0o027)
    try:
        tl.save_variables(tmp_path / "new.safetensors", {"w": tl.Variable([1.0])})
    finally:
        os.umask(old)
    assert os.stat(tmp_path / "new.safetensors").st_mode & 0o777 == 0o640


# ------------------------------------------------------------------ schedule arguments
@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: O.StepDecay("a", 2), r"StepDecay: initial must be a real number, got str 'a'"),
        (lambda: O.StepDecay(0.1, 2, gamma=None), r"StepDecay: gamma must be a real number, got NoneType"),
        (lambda: O.CosineDecay(0.1, 10, alpha="0.1"), r"CosineDecay: alpha must be a real number, got str"),
        (lambda: O.ExponentialDecay(0.1, 10, "0.5"), r"ExponentialDecay: decay_rate must be a real number"),
        (lambda: O.PiecewiseConstant([1, "x"], [1.0, 0.5, 0.1]), r"PiecewiseConstant: boundaries\[1\] must be"),
        (lambda: O.PiecewiseConstant([1], [1.0, [0.5]]), r"PiecewiseConstant: values\[1\] must be a real number"),
        (lambda: O.Warmup("0.1", 3), r"Warmup: after must be a real number"),
        (lambda: O.SGD("0.1"), r"SGD: learning_rate must be a number"),
    ],
)
def test_schedule_arguments_of_the_wrong_kind_name_the_schedule(make, message):
    with pytest.raises(TypeError, match=message):
        make()


def test_a_nan_boundary_is_refused():
    # PiecewiseConstant([nan], [1.0, 0.1]) never switched (t > nan is False at every step).
    with pytest.raises(ValueError, match=r"PiecewiseConstant: boundaries\[0\] must not be NaN"):
        O.PiecewiseConstant([float("nan")], [1.0, 0.1])
    with pytest.raises(ValueError, match=r"StepDecay: initial must not be NaN"):
        O.StepDecay(float("nan"), 2)


def test_schedules_take_numpy_and_tensor_numbers():
    s = O.PiecewiseConstant(np.array([2, 4]), [np.float32(1.0), tl.tensor(0.5), 0.25])
    np.testing.assert_array_equal([float(s(t)) for t in range(6)], [1.0, 1.0, 1.0, 0.5, 0.5, 0.25])
    np.testing.assert_allclose(float(O.StepDecay(np.float64(0.3), 1, tl.tensor(0.5))(2)), 0.075, rtol=1e-15)


# ------------------------------------------------------------------ the learning rate in checkpoints
def _dense_and_data():
    x = tl.tensor(np.linspace(-1.0, 1.0, 12).reshape(4, 3))
    return tl.nn.Dense(3, 2, seed=0, dtype="float64"), x


def test_a_learning_rate_changed_during_training_is_restored(tmp_path):
    # opt.learning_rate = 0.01 after some steps (a manual decay, as on a plateau) was not in the
    # checkpoint: the resumed run went on at the constructor's 0.1 and left the uninterrupted one.
    # torch.optim's state_dict and Keras' optimizer variables both restore the rate.
    model, x = _dense_and_data()
    opt = O.SGD(0.1, momentum=0.9)
    _kernel_trajectory(model, opt, x, steps=2)
    opt.learning_rate = 0.01
    _train_step(model, opt, x)
    path = tmp_path / "ckpt.safetensors"
    tl.save_variables(path, {"model": model, "opt": opt})
    fresh, _ = _dense_and_data()
    fresh_opt = O.SGD(0.1, momentum=0.9)
    tl.load_variables(path, {"model": fresh, "opt": fresh_opt})
    assert fresh_opt.learning_rate == 0.01
    np.testing.assert_array_equal(_kernel_trajectory(fresh, fresh_opt, x), _kernel_trajectory(model, opt, x))


def test_the_learning_rate_entry_is_optional_both_ways(tmp_path):
    model, x = _dense_and_data()
    opt = O.Adam(0.05)
    _train_step(model, opt, x)
    # A checkpoint written before the rate was saved (no learning_rate entry) still loads strictly and
    # keeps the optimizer's own rate.
    path = tmp_path / "old.safetensors"
    state = opt.variables
    tl.save_variables(path, {"model": model, "opt": {"iterations": state["iterations"], "slots": state["slots"]}})
    fresh, _ = _dense_and_data()
    fresh_opt = O.Adam(0.02)
    tl.load_variables(path, {"model": fresh, "opt": fresh_opt})
    assert fresh_opt.learning_rate == 0.02 and int(fresh_opt.iterations.numpy()) == 1
    # A rate in the file and a schedule (or the user's own rate Variable) in the optimizer: the
    # schedule stays, the entry is not an "extra" name.
    tl.save_variables(path, {"model": model, "opt": opt})
    schedule = O.StepDecay(0.3, 10)
    for rate in (schedule, tl.Variable(np.float64(0.7))):
        other = O.Adam(rate)
        tl.load_variables(path, {"model": fresh, "opt": other})
        assert other.learning_rate is schedule if rate is schedule else other.learning_rate == 0.7
        assert int(other.iterations.numpy()) == 1


def test_restoring_the_rate_matches_torch_load_state_dict(tmp_path):
    torch = pytest.importorskip("torch")
    p = torch.nn.Parameter(torch.zeros(2))
    t_opt = torch.optim.SGD([p], lr=0.1)
    t_opt.param_groups[0]["lr"] = 0.01
    t_fresh = torch.optim.SGD([p], lr=0.1)
    t_fresh.load_state_dict(t_opt.state_dict())
    opt = O.SGD(0.1)
    opt.learning_rate = 0.01
    tl.save_variables(tmp_path / "o.safetensors", opt)
    fresh = O.SGD(0.1)
    tl.load_variables(tmp_path / "o.safetensors", fresh)
    assert fresh.learning_rate == t_fresh.param_groups[0]["lr"] == 0.01


# ------------------------------------------------------------------ gradients of the wrong kind
def test_a_bool_gradient_is_refused_naming_the_variable():
    # A bool tensor (a mask given by mistake) was cast to 1.0/0.0 and stepped on; torch refuses a grad of
    # another dtype ("assigned grad has data of a different type"), and a gradient is never a bool.
    w = tl.Variable(np.ones(3, np.float32), name="w")
    opt = O.Adam(0.1)
    with pytest.raises(TypeError, match=r"Adam.apply: gradient at \['w'\] is bool, variable 'w' is float32"):
        opt.apply({"w": tl.tensor([True, False, True])}, {"w": w})
    np.testing.assert_array_equal(w.numpy(), np.ones(3, np.float32))
    assert int(opt.iterations.numpy()) == 0 and not opt.variables["slots"]
    # An integer gradient (a list of Python ints) is still a number: cast, as before.
    O.SGD(0.5).apply([np.array([1, 2, 0])], [w])
    np.testing.assert_array_equal(w.numpy(), [0.5, 0.0, 1.0])


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda t: O.clip_by_norm(t, "a"), TypeError, r"clip_by_norm: clip_norm must be a real number, got str"),
        (lambda t: O.clip_by_norm(t, np.array([1.0, 2.0])), TypeError, r"clip_by_norm: clip_norm must be a real"),
        (lambda t: O.clip_by_global_norm([t], None), TypeError, r"clip_by_global_norm: clip_norm must be a real"),
        (lambda t: O.clip_by_global_norm([t], float("nan")), ValueError, r"clip_by_global_norm: clip_norm must not"),
        (lambda t: O.SGD(0.1, global_clipnorm="1"), TypeError, r"SGD: global_clipnorm must be a real number"),
        (lambda t: O.Adam(global_clipnorm=-1.0), ValueError, r"Adam: global_clipnorm must be positive, got -1.0"),
    ],
)
def test_clip_norms_of_the_wrong_kind_name_the_function(call, error, message):
    # clip_by_norm(t, "a") raised "'>' not supported between instances of 'str' and 'int'" and an array
    # clip_norm "The truth value of an array ... is ambiguous", naming neither the function nor the argument.
    with pytest.raises(error, match=message):
        call(tl.tensor(np.ones((2, 3))))


def test_clip_norm_as_a_numpy_or_tensor_number():
    t = np.array([3.0, 4.0])
    for clip_norm in (np.float32(1.0), tl.tensor(1.0), np.array(1.0)):
        np.testing.assert_allclose(O.clip_by_norm(tl.tensor(t), clip_norm).numpy(), [0.6, 0.8], rtol=1e-15)
        np.testing.assert_allclose(O.clip_by_global_norm([t], clip_norm)[0][0].numpy(), [0.6, 0.8], rtol=1e-15)


# ------------------------------------------------------------------ Module
def test_sequential_refuses_a_layer_class_at_construction():
    # Sequential(Dense(...), Flatten) (the parentheses forgotten) built, and the first call failed with
    # "Module.__init__() takes 1 positional argument but 2 were given"; torch.nn.Sequential(nn.ReLU)
    # refuses the class when it is built.
    with pytest.raises(TypeError, match=r"Sequential: layer 1 is the class Flatten, not a layer; make one"):
        tl.nn.Sequential(tl.nn.Dense(3, 2, seed=0), tl.nn.Flatten)
    model = tl.nn.Sequential(tl.nn.Dense(3, 2, seed=0), tl.nn.Flatten(), tl.nn.relu)  # instances, functions
    assert model(tl.ones((4, 3))).shape == (4, 2)


# ------------------------------------------------------------------ shared variables in checkpoints
class _Tied(tl.Module):
    """Two names for one layer (weight tying), or two layers."""

    def __init__(self, tied):
        super().__init__()
        self.encoder = tl.nn.Dense(2, 2, seed=0, dtype="float64")
        self.decoder = self.encoder if tied else tl.nn.Dense(2, 2, seed=1, dtype="float64")


def test_loading_two_different_values_into_one_shared_variable_is_an_error(tmp_path):
    # A file saved from an untied model, loaded into a tied one: both names were assigned to the one
    # Variable and the decoder's value silently won over the encoder's.
    path = tmp_path / "untied.safetensors"
    tl.save_variables(path, _Tied(tied=False))
    tied = _Tied(tied=True)
    before = tied.encoder.kernel.numpy().copy()
    with pytest.raises(ValueError, match=r"'encoder.kernel' and 'decoder.kernel' are one Variable in the target"):
        tl.load_variables(path, tied)
    np.testing.assert_array_equal(tied.encoder.kernel.numpy(), before)


def test_a_shared_variable_round_trips(tmp_path):
    path = tmp_path / "tied.safetensors"
    model = _Tied(tied=True)
    tl.save_variables(path, model)
    fresh = _Tied(tied=True)
    fresh.encoder.kernel.assign(np.zeros((2, 2)))
    tl.load_variables(path, fresh)
    np.testing.assert_array_equal(fresh.decoder.kernel.numpy(), model.encoder.kernel.numpy())
    assert fresh.decoder is fresh.encoder


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: O.SGD(0.1, momentum="0.9"), r"SGD: momentum must be a real number, got str '0.9'"),
        (lambda: O.Adam(beta_1="0.9"), r"Adam: beta_1 must be a real number, got str"),
        (lambda: O.AdamW(beta_2=None), r"AdamW: beta_2 must be a real number, got NoneType"),
        (lambda: O.RMSprop(rho=[0.9]), r"RMSprop: rho must be a real number, got list"),
        (lambda: O.Adagrad(lr_decay="0"), r"Adagrad: lr_decay must be a real number"),
        (lambda: O.Adam(epsilon="1e-8"), r"Adam: epsilon must be a real number"),
    ],
)
def test_optimizer_hyperparameters_of_the_wrong_kind_name_themselves(make, message):
    # SGD(0.1, momentum="0.9") passed the >= 0 check (float("0.9")) and failed in a bare "'>' not supported
    # between instances of 'str' and 'int'"; Adam(beta_1="0.9") in the same bare comparison.
    with pytest.raises(TypeError, match=message):
        make()


# ------------------------------------------------------------------ apply(grads) after build (Keras 3)
def test_apply_without_variables_updates_the_built_ones():
    # Keras 3: optimizer.build(variables); optimizer.apply(grads) -- here apply(grads) was a TypeError
    # (a required argument missing).
    kernel, bias = tl.Variable(np.array([[1.0, -1.0]])), tl.Variable(np.array([0.5]))
    opt = O.SGD(0.1, momentum=0.9)
    opt.build([kernel, bias])
    expected_k, expected_b, buf_k, buf_b = kernel.numpy(), bias.numpy(), 0.0, 0.0
    for g_k, g_b in (([[1.0, 2.0]], [3.0]), ([[0.5, -1.0]], [1.0])):
        opt.apply([tl.tensor(np.array(g_k)), tl.tensor(np.array(g_b))])
        buf_k, buf_b = 0.9 * buf_k + np.array(g_k), 0.9 * buf_b + np.array(g_b)
        expected_k, expected_b = expected_k - 0.1 * buf_k, expected_b - 0.1 * buf_b
    np.testing.assert_allclose(kernel.numpy(), expected_k, rtol=1e-15)
    np.testing.assert_allclose(bias.numpy(), expected_b, rtol=1e-15)
    # A built Module: its trainable variables at each step.
    model = tl.nn.Dense(2, 1, seed=0, dtype="float64")
    opt = O.Adam(0.1)
    opt.build(model)
    with tl.GradientTape() as tape:
        loss = tl.sum(model(tl.ones((3, 2), dtype="float64")))
    before = model.kernel.numpy()
    opt.apply(tape.gradient(loss, model.trainable_variables))
    np.testing.assert_allclose(model.kernel.numpy(), before - 0.1, rtol=1e-7)  # Adam's first step: lr * sign


def test_apply_without_variables_before_build_names_the_remedy():
    with pytest.raises(TypeError, match=r"Adam.apply: no variables given, and the optimizer was not built"):
        O.Adam().apply([tl.tensor([1.0])])


def test_apply_after_build_matches_keras():
    keras = pytest.importorskip("keras")
    w0, g = np.array([1.0, -2.0], np.float32), np.array([0.5, 0.25], np.float32)
    k_var = keras.Variable(w0)
    k_opt = keras.optimizers.Adam(0.1)
    k_opt.build([k_var])
    w = tl.Variable(w0)
    opt = O.Adam(0.1, epsilon=1e-7)  # Keras' default epsilon
    opt.build([w])
    for _ in range(3):
        k_opt.apply([keras.ops.convert_to_tensor(g)])
        opt.apply([tl.tensor(g)])
    np.testing.assert_allclose(w.numpy(), np.asarray(k_var.numpy()), rtol=1e-5)


# ------------------------------------------------------------------ Keras' clipnorm and clipvalue
def _clip_reference(grads, clipnorm=None, global_clipnorm=None, clipvalue=None):
    if clipnorm is not None:
        return [g * min(1.0, clipnorm / np.sqrt((g * g).sum())) for g in grads]
    if global_clipnorm is not None:
        total = np.sqrt(sum((g * g).sum() for g in grads))
        return [g * min(1.0, global_clipnorm / total) for g in grads]
    return [np.clip(g, -clipvalue, clipvalue) for g in grads]


@pytest.mark.parametrize(
    "clipping",
    [{"clipnorm": 1.0}, {"clipvalue": 0.5}, {"global_clipnorm": 1.5}],
)
def test_clipnorm_and_clipvalue_clip_each_gradient(clipping):
    # Adam(0.1, clipnorm=1.0) (Keras' arguments, common in TF code) was a TypeError: unexpected keyword.
    rng = np.random.default_rng(5)
    w0 = [rng.normal(size=(2, 3)), rng.normal(size=4)]
    ws = [tl.Variable(w.copy()) for w in w0]
    opt = O.SGD(0.1, momentum=0.5, **clipping)
    expected, bufs = [w.copy() for w in w0], [np.zeros_like(w) for w in w0]
    for _ in range(3):
        grads = [rng.normal(size=w.shape) * 3.0 for w in w0]
        opt.apply([tl.tensor(g) for g in grads], ws)
        for i, g in enumerate(_clip_reference(grads, **clipping)):
            bufs[i] = 0.5 * bufs[i] + g
            expected[i] = expected[i] - 0.1 * bufs[i]
    for w, e in zip(ws, expected):
        np.testing.assert_allclose(w.numpy(), e, rtol=1e-13)


def test_two_clipping_arguments_are_refused_and_positions_kept():
    # Keras 3 refuses any two ("Only one of `clipnorm`, `clipvalue` and `global_clipnorm` can be set").
    for two in ({"clipnorm": 1.0, "global_clipnorm": 1.0}, {"clipnorm": 1.0, "clipvalue": 0.5}):
        with pytest.raises(ValueError, match=r"Adam: only one of clipnorm, clipvalue and global_clipnorm can be"):
            O.Adam(**two)
    with pytest.raises(ValueError, match=r"RMSprop: clipvalue must be positive, got -1.0"):
        O.RMSprop(clipvalue=-1.0)
    # Positional arguments keep their places (the new ones come last).
    assert O.SGD(0.1, 0.9, False, 0.0, None, 0.5).dampening == 0.5
    assert O.AdamW(0.1, 0.9, 0.999, 1e-8, 0.01, None, True).amsgrad


def test_clipnorm_and_clipvalue_match_keras():
    keras = pytest.importorskip("keras")
    w0 = np.array([1.0, -2.0, 0.5], np.float32)
    grads = [np.array([3.0, -4.0, 0.2], np.float32), np.array([0.1, 5.0, -0.3], np.float32)]
    for clipping in ({"clipnorm": 1.0}, {"clipvalue": 0.5}, {"global_clipnorm": 1.0}):
        k_var = keras.Variable(w0)
        k_opt = keras.optimizers.SGD(0.1, momentum=0.9, **clipping)
        w = tl.Variable(w0)
        opt = O.SGD(0.1, momentum=0.9, **clipping)
        for g in grads:
            k_opt.apply_gradients([(keras.ops.convert_to_tensor(g), k_var)])
            opt.apply([tl.tensor(g)], [w])
        # Keras' momentum is v = m v - lr g, w += v: PyTorch's form with lr folded in, equal for a constant lr.
        np.testing.assert_allclose(w.numpy(), np.asarray(k_var.numpy()), rtol=1e-6, err_msg=str(clipping))


# ------------------------------------------------------------------ every gradient None
def test_a_step_where_every_gradient_is_none_is_an_error():
    # A loss that does not reach the variables (computed outside the tape, or through .numpy()) gives
    # None for every gradient, and the step silently trained nothing, forever; Keras raises
    # "No gradients provided for any variable."
    model = tl.nn.Dense(2, 1, seed=0)
    opt = O.Adam(0.1)
    x = tl.ones((3, 2))
    with tl.GradientTape() as tape:
        loss = tl.tensor(np.sum(model(x).numpy() ** 2))  # through NumPy: no gradient reaches the model
    grads = tape.gradient(loss, model.trainable_variables)
    assert all(g is None for g in tl.tree.leaves(grads, is_leaf=lambda g: g is None))
    with pytest.raises(ValueError, match=r"Adam.apply: every gradient is None \(2 variables\)"):
        opt.apply(grads, model)
    with pytest.raises(ValueError, match=r"SGD.apply: every gradient is None \(1 variables\)"):
        O.SGD(0.1).apply_gradients([(None, model.bias)])
    assert int(opt.iterations.numpy()) == 0
    # Some None (a frozen or unused part) still steps the others; nothing to train at all is no error.
    O.SGD(0.1).apply([None, tl.tensor(np.ones(1, np.float32))], [model.kernel, model.bias])
    O.SGD(0.1).apply([], [])
    O.SGD(0.1).apply({"a": None}, {"a": None})


def test_every_gradient_none_in_a_traced_step_is_an_error():
    w = tl.Variable(np.array([1.0]))
    opt = O.SGD(0.1)
    step = tl.function(lambda: opt.apply([None], [w]))
    with pytest.raises(ValueError, match=r"SGD.apply: every gradient is None"):
        step()

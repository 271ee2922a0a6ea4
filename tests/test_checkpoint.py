"""tl.save_variables / tl.load_variables: safetensors files, atomic writes, errors that list every problem."""

import os

import numpy as np
import pytest

import tensorlib as tl

pytest.importorskip("safetensors")


def _model(seed):
    return tl.nn.Sequential(
        tl.nn.Conv2D(1, 2, 3, seed=seed), tl.nn.BatchNorm(2), tl.nn.Flatten(), tl.nn.Dense(8, 3, seed=seed + 1)
    )


def test_round_trip_restores_every_variable_including_running_statistics(tmp_path):
    model = _model(0)
    model(np.random.default_rng(0).normal(size=(2, 2, 2, 1)).astype(np.float32))  # moves the running stats
    path = tmp_path / "model.safetensors"
    tl.save_variables(path, model)
    fresh = _model(10)
    assert tl.load_variables(path, fresh) is fresh
    for name in ("kernel", "bias"):
        np.testing.assert_array_equal(getattr(fresh[0], name).numpy(), getattr(model[0], name).numpy())
    np.testing.assert_array_equal(fresh[1].running_var.numpy(), model[1].running_var.numpy())
    assert not np.array_equal(model[1].running_var.numpy(), np.ones(2))


def test_file_is_plain_safetensors_with_dotted_names(tmp_path):
    from safetensors.numpy import load_file

    path = tmp_path / "m.safetensors"
    tl.save_variables(path, {"model": _model(0), "step": tl.Variable(np.int64(7))})
    arrays = load_file(str(path))
    assert sorted(arrays) == [
        "model.0.bias",
        "model.0.kernel",
        "model.1.offset",
        "model.1.running_mean",
        "model.1.running_var",
        "model.1.scale",
        "model.3.bias",
        "model.3.kernel",
        "step",
    ]
    assert arrays["model.0.kernel"].dtype == np.float32 and arrays["step"].dtype == np.int64
    loaded = tl.load_variables(path)
    assert int(loaded["step"].numpy()) == 7


def test_optimizer_state_round_trips(tmp_path):
    w = tl.Variable(np.ones(2), name="w")
    opt = tl.optimizers.Adam(0.1)
    opt.apply([tl.tensor(np.array([1.0, 2.0]))], [w])
    tl.save_variables(tmp_path / "opt.safetensors", opt)
    w2 = tl.Variable(np.ones(2), name="w")
    opt2 = tl.optimizers.Adam(0.1)
    opt2.apply([tl.tensor(np.zeros(2))], [w2])
    tl.load_variables(tmp_path / "opt.safetensors", opt2)
    np.testing.assert_array_equal(opt2.variables["slots"]["0"]["m"].numpy(), opt.variables["slots"]["0"]["m"].numpy())
    assert int(opt2.iterations.numpy()) == 1


def test_training_resumes_from_a_model_and_optimizer_checkpoint(tmp_path):
    x = np.random.default_rng(0).normal(size=(8, 4)).astype(np.float32)

    def make():
        return tl.nn.Sequential(tl.nn.Dense(4, 4, seed=0), tl.nn.Dense(4, 1, seed=1)), tl.optimizers.Adam(0.01)

    def step(model, opt):
        with tl.GradientTape() as tape:
            loss = tl.mean(tl.square(model(x)))
        opt.apply(tape.gradient(loss, model.trainable_variables), model.trainable_variables)

    model, opt = make()
    step(model, opt)
    tl.save_variables(tmp_path / "ckpt.safetensors", {"model": model, "optimizer": opt})
    assert sorted(opt.variables["slots"]) == ["0/bias", "0/kernel", "1/bias", "1/kernel"]
    step(model, opt)
    resumed, resumed_opt = make()
    step(resumed, resumed_opt)  # creates the slots, then the checkpoint overwrites everything
    tl.load_variables(tmp_path / "ckpt.safetensors", {"model": resumed, "optimizer": resumed_opt})
    step(resumed, resumed_opt)
    np.testing.assert_allclose(resumed[1].kernel.numpy(), model[1].kernel.numpy(), rtol=1e-6)


def test_load_error_lists_missing_extra_and_misshaped_and_changes_nothing(tmp_path):
    path = tmp_path / "a.safetensors"
    tl.save_variables(path, {"w": tl.Variable(np.zeros((2, 3), np.float32)), "old": tl.Variable(np.zeros(1))})
    target = {"w": tl.Variable(np.ones((3, 2), np.float32)), "new": tl.Variable(np.ones(1))}
    with pytest.raises(ValueError) as info:
        tl.load_variables(path, target)
    message = str(info.value)
    assert "missing from the file: ['new']" in message
    assert "in the file but not in the target: ['old']" in message
    assert "'w' has shape (2, 3) float32 in the file, but (3, 2) float32 in the target" in message
    assert target["w"].numpy().tolist() == np.ones((3, 2)).tolist()
    with pytest.raises(ValueError, match=r"'w' has shape \(2, 3\)"):
        tl.load_variables(path, target, strict=False)
    target["w"] = tl.Variable(np.ones((2, 3), np.float32))
    tl.load_variables(path, target, strict=False)
    assert target["w"].numpy().sum() == 0 and target["new"].numpy().tolist() == [1.0]


def test_write_is_atomic(tmp_path, monkeypatch):
    import safetensors.numpy

    path = tmp_path / "ckpt.safetensors"
    tl.save_variables(path, {"w": tl.Variable(np.ones(2))})
    before = path.read_bytes()

    def broken(arrays, filename, metadata=None):
        with open(filename, "wb") as f:
            f.write(b"partial")
        raise OSError("disk full")

    monkeypatch.setattr(safetensors.numpy, "save_file", broken)
    with pytest.raises(OSError, match="disk full"):
        tl.save_variables(path, {"w": tl.Variable(np.zeros(2))})
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["ckpt.safetensors"]


def test_bad_inputs(tmp_path):
    with pytest.raises(TypeError, match="save_variables: entry 'a' is a str"):
        tl.save_variables(tmp_path / "x.safetensors", {"a": "text"})
    with pytest.raises(ValueError, match="contains '.'"):  # a dot above a subtree (a leaf's own key may hold them)
        tl.save_variables(tmp_path / "x.safetensors", {"a.b": {"c": tl.Variable(1.0)}})
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes(b"\x00" * 20)
    with pytest.raises(ValueError, match="is not a readable safetensors file"):
        tl.load_variables(bad)
    with pytest.raises(FileNotFoundError):
        tl.load_variables(tmp_path / "absent.safetensors")


def test_two_entries_with_one_name_are_an_error_not_a_lost_entry(tmp_path):
    a, b = tl.Variable(1.0), tl.Variable(2.0)
    with pytest.raises(ValueError, match="save_variables: two entries are both named '0'"):
        tl.save_variables(tmp_path / "x.safetensors", {"0": a, 0: b})  # b alone was written
    tl.save_variables(tmp_path / "x.safetensors", {"w": a})
    with pytest.raises(ValueError, match="load_variables: two entries are both named 'm.0'"):
        tl.load_variables(tmp_path / "x.safetensors", {"m": {"0": a, 0: b}}, strict=False)
    assert float(a.numpy()) == 1.0 and float(b.numpy()) == 2.0


def test_the_format_s_reserved_name_is_refused_at_save(tmp_path):
    # It was written, as a second "__metadata__" key in the header: a file that no reader loads.
    with pytest.raises(ValueError, match="save_variables: the name '__metadata__' is reserved"):
        tl.save_variables(tmp_path / "x.safetensors", {"__metadata__": tl.Variable(1.0)})
    assert os.listdir(tmp_path) == []


def test_a_load_that_fails_part_way_leaves_every_variable_as_it_was(tmp_path):
    # 'b' was read by a recording tape, so its assign raises: 'a' (assigned before it) stayed loaded.
    path = tmp_path / "x.safetensors"
    tl.save_variables(path, {"a": tl.Variable(np.ones(3)), "b": tl.Variable(np.ones(3))})
    a, b = tl.Variable(np.zeros(3)), tl.Variable(np.zeros(3))
    with tl.GradientTape():
        tl.sum(b * b)
        with pytest.raises(RuntimeError, match="was read by a GradientTape that is still recording"):
            tl.load_variables(path, {"a": a, "b": b})
    assert a.numpy().tolist() == [0.0, 0.0, 0.0] and b.numpy().tolist() == [0.0, 0.0, 0.0]


def _raw_file(path, entries: dict) -> None:
    """A safetensors file written by hand: {name: (dtype code, shape, bytes)}."""
    import json
    import struct

    header, data = {}, b""
    for name, (code, shape, raw) in entries.items():
        header[name] = {"dtype": code, "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(text)) + text + data)


def test_entries_tensorlib_cannot_hold_are_named(tmp_path):
    # bfloat16 (from PyTorch) made the whole file "not a readable safetensors file"; uint64 raised
    # tensorlib's bare dtype error, naming neither load_variables nor the entry.
    path = tmp_path / "x.safetensors"
    ok = np.arange(2.0).tobytes()
    _raw_file(
        path, {"h": ("BF16", [2], b"\x80\x3f\x00\x40"), "u": ("U64", [1], b"\x01" + b"\x00" * 7), "w": ("F64", [2], ok)}
    )
    with pytest.raises(
        TypeError, match=r"load_variables: .* has entries tensorlib cannot hold: \{'h': .*bfloat16.*'u': .*uint64"
    ):
        tl.load_variables(path)
    w = tl.Variable(np.ones(2))
    with pytest.raises(ValueError, match=r"'h' cannot be read: .*bfloat16"):
        tl.load_variables(path, {"h": tl.Variable(np.ones(2, np.float32)), "w": w}, strict=False)
    assert w.numpy().tolist() == [1.0, 1.0]
    tl.load_variables(path, {"w": w}, strict=False)  # entries the target does not ask for do not matter
    assert w.numpy().tolist() == [0.0, 1.0]
    with pytest.raises(ValueError, match=r"in the file but not in the target: \['h', 'u'\]"):
        tl.load_variables(path, {"w": w})


def test_a_folder_is_refused_by_name(tmp_path):
    with pytest.raises(IsADirectoryError, match="save_variables: .* is a folder; give the checkpoint's file name"):
        tl.save_variables(tmp_path, {"w": tl.Variable(1.0)})
    with pytest.raises(IsADirectoryError, match="load_variables: .* is a folder, not a checkpoint file"):
        tl.load_variables(tmp_path)


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="names an open file through /proc")
def test_the_bytes_reach_the_disk_before_the_rename(tmp_path, monkeypatch):
    # Renamed unflushed, a power cut could leave an empty file under the checkpoint's name.
    events = []
    real_replace = os.replace
    monkeypatch.setattr(os, "fsync", lambda fd: events.append(("fsync", os.readlink(f"/proc/self/fd/{fd}"))))
    monkeypatch.setattr(os, "replace", lambda a, b: (events.append(("replace", str(a))), real_replace(a, b)))
    tl.save_variables(tmp_path / "x.safetensors", {"w": tl.Variable(np.ones(3))})
    [(_, tmp)] = [e for e in events if e[0] == "replace"]
    assert events.index(("fsync", tmp)) < events.index(("replace", tmp))
    assert events[-1] == ("fsync", str(tmp_path))


@pytest.mark.parametrize("how", ["first_apply", "build", "traced"])
def test_a_fresh_optimizer_restores_its_slots_before_its_first_step(tmp_path, how):
    # Loading into an optimizer that had taken no step was a ValueError (its slots did not exist yet:
    # "in the file but not in the target: ['optimizer.slots.0/bias.m', ...]").  Reference: the run
    # that never stopped, as torch.optim's load_state_dict into a fresh optimizer resumes it.
    x = np.random.default_rng(0).normal(size=(8, 4))

    def make():
        model = tl.nn.Sequential(
            tl.nn.Dense(4, 3, seed=0, dtype=tl.float64), tl.nn.Dense(3, 1, seed=1, dtype=tl.float64)
        )
        return model, tl.optimizers.Adam(0.01, weight_decay=0.1)

    def step(model, opt):
        with tl.GradientTape() as tape:
            loss = tl.mean(tl.square(model(x)))
        opt.apply(tape.gradient(loss, model.trainable_variables), model.trainable_variables)

    model, opt = make()
    for _ in range(3):
        step(model, opt)
    tl.save_variables(tmp_path / "ckpt.safetensors", {"model": model, "optimizer": opt})
    step(model, opt)
    resumed, resumed_opt = make()
    if how == "build":
        resumed_opt.build(resumed.trainable_variables)
    tl.load_variables(tmp_path / "ckpt.safetensors", {"model": resumed, "optimizer": resumed_opt})
    (tl.function(step) if how == "traced" else step)(resumed, resumed_opt)
    for (path, a), (_, b) in zip(
        tl.tree.flatten_with_path(resumed.variables)[0], tl.tree.flatten_with_path(model.variables)[0]
    ):
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=str(path))
    assert int(resumed_opt.iterations.numpy()) == 4
    assert int(resumed_opt.variables["slots"]["1/kernel"]["step"].numpy()) == 4


def test_slots_restored_before_the_first_step_are_checked(tmp_path):
    w = tl.Variable(np.ones(3), name="w")
    opt = tl.optimizers.Adam(0.1)
    opt.apply([tl.tensor(np.ones(3))], [w])
    tl.save_variables(tmp_path / "opt.safetensors", opt)
    with pytest.raises(
        ValueError,
        match=r"in the file but not in the target: \['hyperparameters.amsgrad', 'hyperparameters.beta_1', 'hyperparameters.beta_2', "
        r"'hyperparameters.epsilon', 'slots.0.m', 'slots.0.step', 'slots.0.v'\]",
    ):
        tl.load_variables(tmp_path / "opt.safetensors", tl.optimizers.SGD(0.1, momentum=0.9))
    fresh = tl.optimizers.Adam(0.1)
    tl.load_variables(tmp_path / "opt.safetensors", fresh)
    wrong = tl.Variable(np.ones(2), name="wrong")
    message = r"Adam: the checkpoint's slot 0/m has shape \(3,\) float64, but variable 'wrong' \(\(2,\) float64\) needs \(2,\) float64"
    with pytest.raises(ValueError, match=message):
        fresh.apply([tl.tensor(np.ones(2))], [wrong])
    assert wrong.numpy().tolist() == [1.0, 1.0] and int(fresh.iterations.numpy()) == 1
    with pytest.raises(TypeError, match=r"Adam.build: variable .i. has dtype int64; only float and complex variables"):
        fresh.build([tl.Variable(np.arange(3), name="i")])


def test_save_and_load_refuse_to_be_traced(tmp_path):
    # Inside tl.function the file was read (or written) once, at trace time: a later call of the graph
    # re-assigned the values read then, whatever the file held by that time, and saved nothing.
    path = tmp_path / "w.safetensors"
    w = tl.Variable(np.zeros(2))
    tl.save_variables(path, {"w": w})
    message = r"{}: called while tl.function traces; a checkpoint is read and written in Python"
    with pytest.raises(RuntimeError, match=message.format("load_variables")):
        tl.function(lambda: tl.load_variables(path, {"w": w}))()
    with pytest.raises(RuntimeError, match=message.format("save_variables")):
        tl.function(lambda: tl.save_variables(path, {"w": w}))()
    with pytest.raises(
        FileNotFoundError, match=r"save_variables: the folder '.*nowhere' of '.*x.safetensors' does not"
    ):
        tl.save_variables(tmp_path / "nowhere" / "x.safetensors", {"w": w})


def test_slots_restored_before_the_first_step_are_saved_again(tmp_path):
    # Saving an optimizer that had restored slots but taken no step wrote only 'iterations': the
    # slots were lost (as if the moments were reset) when a checkpoint was loaded and saved again.
    w = tl.Variable(np.ones(3), name="w")
    opt = tl.optimizers.Adam(0.1)
    opt.apply([tl.tensor(np.array([1.0, 2.0, 3.0]))], [w])
    tl.save_variables(tmp_path / "a.safetensors", opt)
    middle = tl.load_variables(tmp_path / "a.safetensors", tl.optimizers.Adam(0.1))
    tl.save_variables(tmp_path / "b.safetensors", middle)
    first, again = tl.load_variables(tmp_path / "a.safetensors"), tl.load_variables(tmp_path / "b.safetensors")
    hypers = [f"hyperparameters.{n}" for n in ("amsgrad", "beta_1", "beta_2", "epsilon", "maximize", "weight_decay")]
    want = [*hypers, "iterations", "learning_rate", "slots.0.m", "slots.0.step", "slots.0.v"]
    assert sorted(again) == sorted(first) == want
    for name in first:
        np.testing.assert_array_equal(again[name].numpy(), first[name].numpy())


# ---------------------------------------------------------------- in-memory state dicts
def test_state_dict_is_a_copy_and_round_trips_into_a_fresh_model():
    a = tl.nn.Sequential(tl.nn.Dense(3, 4, seed=0), tl.nn.BatchNorm(4), tl.nn.Dense(4, 2, seed=1))
    state = a.state_dict()
    assert sorted(state) == sorted(tl.checkpoint.state_dict(a.variables))
    assert all(isinstance(v, np.ndarray) for v in state.values())
    kernel = a.variables["0"]["kernel"]
    before = kernel.numpy().copy()
    state["0.kernel"][...] = 7.0  # the dict is the caller's: writing to it leaves the model alone
    np.testing.assert_array_equal(kernel.numpy(), before)
    state["0.kernel"] = before
    b = tl.nn.Sequential(tl.nn.Dense(3, 4, seed=5), tl.nn.BatchNorm(4), tl.nn.Dense(4, 2, seed=6))
    assert b.load_state_dict(state) == ([], [])
    x = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    np.testing.assert_array_equal(b.eval()(x).numpy(), a.eval()(x).numpy())
    kernel.assign(np.zeros((3, 4), np.float32))  # the loaded model does not share the Variables
    assert np.any(b.variables["0"]["kernel"].numpy() != 0)


def test_load_state_dict_is_all_or_nothing_and_reports_skipped_names():
    model = tl.nn.Dense(2, 3, seed=0)
    good = model.state_dict()
    before = {k: v.copy() for k, v in good.items()}
    bad = {"kernel": np.ones((2, 3), np.float32), "bias": np.ones(4, np.float32)}
    with pytest.raises(
        ValueError, match=r"'bias' has shape \(4,\) float32 in the state, but \(3,\) float32 in the target"
    ):
        model.load_state_dict(bad)
    for k, v in model.state_dict().items():  # the kernel, which fitted, did not change either
        np.testing.assert_array_equal(v, before[k])
    with pytest.raises(ValueError, match=r"missing from the state: \['bias'\]"):
        model.load_state_dict({"kernel": good["kernel"]})
    with pytest.raises(ValueError, match=r"in the state but not in the target: \['extra'\]"):
        model.load_state_dict({**good, "extra": np.zeros(1)})
    assert model.load_state_dict({"kernel": good["kernel"] + 1, "extra": np.zeros(1)}, strict=False) == (
        ["bias"],
        ["extra"],
    )
    np.testing.assert_array_equal(model.kernel.numpy(), good["kernel"] + 1)
    with pytest.raises(ValueError, match=r"'kernel' has shape \(2, 3\) float64 in the state, but \(2, 3\) float32"):
        model.load_state_dict({**good, "kernel": good["kernel"].astype(np.float64)})
    with pytest.raises(TypeError, match=r"load_state_dict: state must be a dict of names"):
        model.load_state_dict([("kernel", good["kernel"])])


def test_optimizer_state_dicts_resume_training():
    w0 = np.random.default_rng(1).standard_normal(3)
    grads = [np.random.default_rng(k).standard_normal(3) for k in range(8)]
    v, opt = tl.Variable(w0, name="w"), tl.optimizers.Adam(0.1)
    for g in grads[:4]:
        opt.apply({"w": tl.tensor(g)}, {"w": v})
    saved = tl.checkpoint.state_dict({"model": {"w": v}, "opt": opt})
    for g in grads[4:]:
        opt.apply({"w": tl.tensor(g)}, {"w": v})
    v2, opt2 = tl.Variable(np.zeros(3), name="w"), tl.optimizers.Adam(0.1)
    assert tl.checkpoint.load_state_dict({"model": {"w": v2}, "opt": opt2}, saved) == ([], [])
    for g in grads[4:]:
        opt2.apply({"w": tl.tensor(g)}, {"w": v2})
    np.testing.assert_allclose(v2.numpy(), v.numpy(), rtol=1e-14)

"""Files as an adversary sees them: checkpoints, saved graphs, pickling and copying.

Attacks the paths a save writes to (folders, symlinks, bytes paths, missing folders), the atomicity of a
save that is refused or fails (the old files keep loading, no temporary is left), and what pickle and
``copy`` make of traced functions and graphs.  References: the file system itself (what ``open(path,
"w")`` would replace), NumPy for the values a loaded or copied graph computes, and float64 central
finite differences for its gradients.
"""

import copy
import json
import os
import pickle

import numpy as np
import pytest
from _helpers import central_differences

import tensorlib as tl
from tensorlib.graph.serialize import GraphFormatError


def _times(k):
    return tl.function(lambda x: x * k)


SPEC = tl.TensorSpec((None,), "float32")
SCALE = tl.Variable(np.array([0.5, -1.5, 2.0], np.float32), name="scale")


@tl.function
def scaled_softplus(x):
    return tl.sum(tl.nn.softplus(x * SCALE), axis=-1)


def _softplus_reference(x, scale):
    return np.log1p(np.exp(x * scale)).sum(-1)


ONES = np.ones(3, np.float32)


def test_a_graph_saved_through_a_symlink_replaces_the_file_it_names(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    _times(2.0).save(real / "f.json", SPEC)
    for name in ("f.json", "f.npz"):
        os.symlink(real / name, tmp_path / name)
    _times(3.0).save(tmp_path / "f.json", SPEC)
    # The links stay links, and what they name is the new graph (open(path, "w") would write there too).
    assert os.path.islink(tmp_path / "f.json") and os.path.islink(tmp_path / "f.npz")
    np.testing.assert_array_equal(tl.graph.load(real / "f.json")(ONES).numpy(), 3.0 * ONES)
    assert sorted(os.listdir(real)) == ["f.json", "f.npz"]


def test_a_folder_in_the_way_of_either_graph_file_changes_nothing(tmp_path):
    path = tmp_path / "g.json"
    _times(2.0).save(path, SPEC)
    os.remove(path)
    os.mkdir(path)  # the .npz of the old save is still there, and must stay as it was
    before = (tmp_path / "g.npz").read_bytes()
    with pytest.raises(IsADirectoryError, match=r"graph.save: .*g.json' is a folder; give the graph's file name"):
        _times(3.0).save(path, SPEC)
    assert (tmp_path / "g.npz").read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["g.json", "g.npz"]
    # A folder given without .json: its .npz went beside the folder, then the JSON's rename failed.
    with pytest.raises(IsADirectoryError, match="graph.save: .* is a folder"):
        _times(3.0).save(tmp_path, SPEC)
    assert not os.path.exists(f"{tmp_path}.npz")
    with pytest.raises(IsADirectoryError, match="graph.load: .*g.json' is a folder, not a graph file"):
        tl.graph.load(path)


def test_a_graph_path_may_be_bytes_and_its_folder_must_exist(tmp_path):
    path = os.fsencode(tmp_path / "g.json")
    _times(2.0).save(path, SPEC)
    np.testing.assert_array_equal(tl.graph.load(path)(ONES).numpy(), 2.0 * ONES)
    with pytest.raises(FileNotFoundError, match=r"graph.save: the folder .*nowhere' of .* does not exist"):
        _times(2.0).save(tmp_path / "nowhere" / "g.json", SPEC)
    assert sorted(os.listdir(tmp_path)) == ["g.json", "g.npz"]


def test_graph_files_get_the_permissions_open_gives_and_keep_their_own(tmp_path):
    old = os.umask(0o022)
    try:
        path = tmp_path / "g.json"
        _times(2.0).save(path, SPEC)
        # mkstemp's 0o600 had made a saved graph unreadable to the group and others.
        assert os.stat(path).st_mode & 0o777 == 0o644 and os.stat(tmp_path / "g.npz").st_mode & 0o777 == 0o644
        os.chmod(path, 0o600)
        _times(3.0).save(path, SPEC)
        assert os.stat(path).st_mode & 0o777 == 0o600
    finally:
        os.umask(old)


def test_a_checkpoint_through_a_symlink_and_into_a_missing_folder(tmp_path):
    pytest.importorskip("safetensors")
    real = tmp_path / "real.safetensors"
    tl.save_variables(real, {"w": tl.Variable(np.zeros(2))})
    os.symlink(real, tmp_path / "link.safetensors")
    tl.save_variables(os.fsencode(tmp_path / "link.safetensors"), {"w": tl.Variable(np.ones(2))})
    assert os.path.islink(tmp_path / "link.safetensors")
    np.testing.assert_array_equal(tl.load_variables(real)["w"].numpy(), np.ones(2))
    with pytest.raises(FileNotFoundError, match="save_variables: the folder .* does not exist"):
        tl.save_variables(tmp_path / "nowhere" / "c.safetensors", {"w": tl.Variable(1.0)})
    assert sorted(os.listdir(tmp_path)) == ["link.safetensors", "real.safetensors"]


def test_a_graph_file_whose_version_is_true_is_refused(tmp_path):
    path = tmp_path / "g.json"
    _times(2.0).save(path, SPEC)
    doc = json.loads(path.read_text())
    doc["version"] = True  # True == 1 in Python, but no writer wrote it
    path.write_text(json.dumps(doc))
    with pytest.raises(GraphFormatError, match="version True is not supported"):
        tl.graph.load(path)


def test_a_module_level_tl_function_pickles_by_name_and_copies_into_a_new_function():
    x = np.array([[0.3, -0.2, 1.0], [2.0, 0.5, -1.0]], np.float32)
    # pickle.dumps had failed: its Python function, pickled by name, was found to be this Function instead.
    loaded = pickle.loads(pickle.dumps(scaled_softplus))
    assert loaded is scaled_softplus
    for copied in (copy.copy(scaled_softplus), copy.deepcopy(scaled_softplus)):
        assert copied is not scaled_softplus and isinstance(copied, tl.graph.Function)
        np.testing.assert_allclose(copied(x).numpy(), _softplus_reference(x, SCALE.numpy()), rtol=1e-6)


@pytest.mark.parametrize("how", ["pickle", "deepcopy"])
def test_a_graph_pickles_and_deep_copies_with_its_values_results_and_gradients(how):
    scale = tl.Variable(np.array([0.5, -1.5, 2.0]), name="scale")
    shift = np.array([0.1, 0.2, -0.3])
    f = tl.function(lambda x: tl.sum(tl.nn.softplus(x * scale + shift), axis=-1))
    graph = f.get_graph(tl.TensorSpec((None, 3), "float64"))
    # Both had raised "a symbolic tensor has no value while tl.function traces", naming no graph.
    copied = pickle.loads(pickle.dumps(graph)) if how == "pickle" else copy.deepcopy(graph)
    assert [c.name for c in copied.captures] == [c.name for c in graph.captures]
    x = np.random.default_rng(0).normal(size=(4, 3))

    def reference(x):
        return np.log1p(np.exp(x * np.array([0.5, -1.5, 2.0]) + shift)).sum(-1)

    np.testing.assert_allclose(copied(x).numpy(), reference(x), rtol=1e-12)
    xt = tl.tensor(x)
    with tl.GradientTape() as tape:
        tape.watch(xt)
        y = tl.sum(copied(xt))
    np.testing.assert_allclose(
        tape.gradient(y, xt).numpy(), central_differences(lambda v: reference(v).sum(), x), rtol=1e-6
    )
    # The copy's Variable is its own: assigning either leaves the other as it was.
    [variable] = [c.source for c in copied.captures if c.kind == "variable"]
    variable.assign([1.0, 1.0, 1.0])
    np.testing.assert_array_equal(scale.numpy(), [0.5, -1.5, 2.0])
    np.testing.assert_allclose(graph(x).numpy(), reference(x), rtol=1e-12)
    np.testing.assert_allclose(copied(x).numpy(), np.log1p(np.exp(x + shift)).sum(-1), rtol=1e-12)


def test_a_graph_that_holds_a_python_gradient_function_refuses_to_pickle():
    @tl.custom_gradient
    def clip_gradient(x):
        return x, lambda g: tl.clip_by_value(g, -1.0, 1.0)

    graph = tl.function(lambda x: clip_gradient(x) * 2.0).get_graph(SPEC)
    with pytest.raises(ValueError, match="Python callable .* cannot be saved"):
        pickle.dumps(graph)


class _Unconvertible:
    """A value NumPy cannot convert, as a torch bfloat16 tensor is."""

    def __array__(self, dtype=None, copy=None):
        raise TypeError("Got unsupported ScalarType BFloat16")


def test_load_state_dict_names_a_value_numpy_cannot_convert_and_changes_nothing():
    model = tl.nn.Dense(3, 2, seed=0)
    before = tl.checkpoint.state_dict(model)
    state = {"kernel": np.ones((3, 2), np.float32), "bias": _Unconvertible()}
    # The converter's own TypeError had escaped, naming neither load_state_dict nor the entry.
    with pytest.raises(ValueError, match=r"load_state_dict: .*'bias' cannot be read: _Unconvertible \(Got unsupported"):
        model.load_state_dict(state)
    np.testing.assert_array_equal(model.kernel.numpy(), before["kernel"])
    np.testing.assert_array_equal(model.bias.numpy(), before["bias"])


def test_load_state_dict_takes_a_torch_state_dict_and_names_its_bfloat16_entries():
    torch = pytest.importorskip("torch")
    model = tl.nn.Dense(3, 2, seed=0)
    state = {"kernel": torch.randn(3, 2), "bias": torch.randn(2)}
    model.load_state_dict(state)
    np.testing.assert_array_equal(model.kernel.numpy(), state["kernel"].numpy())
    with pytest.raises(ValueError, match=r"'bias' cannot be read: Tensor .*BFloat16"):
        model.load_state_dict({"kernel": torch.zeros(3, 2), "bias": torch.zeros(2, dtype=torch.bfloat16)})
    np.testing.assert_array_equal(model.kernel.numpy(), state["kernel"].numpy())


@pytest.mark.parametrize("how", ["file", "pickle"])
def test_a_saved_non_trainable_variable_comes_back_non_trainable(tmp_path, how):
    norm = tl.nn.BatchNorm(2, dtype=np.float64)
    f = tl.function(lambda x: tl.sum(norm(x, training=True) ** 3, axis=-1))
    spec = tl.TensorSpec((None, 2), "float64")
    if how == "file":
        f.save(tmp_path / "bn.json", spec, include_captures=True)
        graph = tl.graph.load(tmp_path / "bn.json")
    else:
        graph = pickle.loads(pickle.dumps(f.get_graph(spec)))
    flags = {c.name: c.source.trainable for c in graph.captures}
    # Loaded trainable, the running statistics were watched by every tape, which then refused their update.
    assert flags == {"running_mean": False, "running_var": False, "scale": True, "offset": True}
    x = np.array([[0.5, -1.0], [2.0, 0.25], [-0.75, 1.5]])

    def reference(x):
        z = (x - x.mean(0)) / np.sqrt(x.var(0) + 1e-5)
        return (z**3).sum(-1)

    xt = tl.tensor(x)
    with tl.GradientTape() as tape:
        tape.watch(xt)
        y = tl.sum(graph(xt))
    np.testing.assert_allclose(y.numpy(), reference(x).sum(), rtol=1e-12)
    np.testing.assert_allclose(
        tape.gradient(y, xt).numpy(), central_differences(lambda v: reference(v).sum(), x), rtol=1e-5, atol=1e-8
    )
    running_mean = next(c.source for c in graph.captures if c.name == "running_mean")
    np.testing.assert_allclose(running_mean.numpy(), 0.1 * x.mean(0), rtol=1e-12)


def test_a_graph_file_with_two_captures_of_one_name_is_refused(tmp_path):
    a, b = np.ones(3, np.float32), np.full(3, 2.0, np.float32)
    path = tmp_path / "g.json"
    tl.function(lambda x: x * a + b).save(path, tl.TensorSpec((3,), "float32"))
    doc = json.loads(path.read_text())
    assert [c["name"] for c in doc["captures"]] == ["a", "b"]
    doc["captures"][1]["name"] = "a"
    path.write_text(json.dumps(doc))
    # It loaded, and then asked for 'a' however it was called: captures are fed by name.
    with pytest.raises(GraphFormatError, match="two captures are named 'a'"):
        tl.graph.load(path)


def test_a_checkpoint_name_that_is_not_utf8_text_is_refused_by_name(tmp_path):
    pytest.importorskip("safetensors")
    path = tmp_path / "c.safetensors"
    tl.save_variables(path, {"w": tl.Variable(1.0)})
    before = path.read_bytes()
    # A lone surrogate (what os.fsdecode makes of a non-UTF-8 file name) had raised the encoder's own error.
    with pytest.raises(ValueError, match=r"save_variables: the name '\\udcff' is not UTF-8 text"):
        tl.save_variables(path, {"\udcff": tl.Variable(2.0)})
    assert path.read_bytes() == before and os.listdir(tmp_path) == ["c.safetensors"]
    tl.save_variables(path, {"é/ü": tl.Variable(2.0)})  # any UTF-8 text is a name, separators included
    assert list(tl.load_variables(path)) == ["é/ü"]


def _adam_after_one_step():
    model = tl.nn.Dense(3, 2, seed=0)
    opt = tl.optimizers.Adam(0.1)
    x = tl.tensor(np.linspace(-1.0, 1.0, 12, dtype=np.float32).reshape(4, 3))
    with tl.GradientTape() as tape:
        loss = tl.sum(model(x) ** 2)
    opt.apply(tape.gradient(loss, model.variables), model.variables)
    return model, opt


@pytest.mark.parametrize(
    "name, value, what",
    [
        ("learning_rate", -1.0, "learning rate"),
        ("learning_rate", np.nan, "learning rate"),
        ("iterations", -5, "step counter"),
        ("slots.kernel.step", -5, "step counter"),
    ],
)
@pytest.mark.parametrize("fresh", [False, True])
def test_an_optimizer_state_its_constructor_would_refuse_is_refused_and_changes_nothing(
    tmp_path, name, value, what, fresh
):
    _, opt = _adam_after_one_step()
    state = opt.state_dict()
    state[name] = np.array(value, state[name].dtype)
    target = tl.optimizers.Adam(0.01) if fresh else _adam_after_one_step()[1]
    before = target.state_dict()
    # Adam(-1.0) and opt.learning_rate = nan are refused; loaded, they had made the optimizer climb the loss.
    message = rf"'{name}' is {value} in the state, but a {what} of Adam must be >= 0"
    with pytest.raises(ValueError, match=message):
        target.load_state_dict(state)
    after = target.state_dict()
    assert sorted(after) == sorted(before)
    for key, array in before.items():
        np.testing.assert_array_equal(after[key], array)
    path = tmp_path / "opt.safetensors"
    pytest.importorskip("safetensors.numpy").save_file(state, str(path))
    with pytest.raises(ValueError, match=message.replace("the state", "the file")):
        tl.load_variables(path, target)


def test_a_compressed_array_member_is_refused_before_it_is_inflated(tmp_path):
    import tracemalloc
    import zipfile

    n = 1 << 20  # 8 MiB of float64 zeros: a few KB deflated
    f = tl.function(lambda x: x + tl.sum(tl.tensor(np.zeros(n))))  # a temporary too big for a constant: saved
    path = tmp_path / "g.json"
    f.save(path, tl.TensorSpec((), "float64"))
    npz = tmp_path / "g.npz"
    with zipfile.ZipFile(npz) as z:
        members = {i.filename: z.read(i) for i in z.infolist()}
    [name] = [m for m in members if m.startswith("capture_")]
    assert len(members[name]) > n * 8
    with zipfile.ZipFile(npz, "w") as z:  # as graph.save wrote it, but this member deflated
        for member, data in members.items():
            z.writestr(member, data, zipfile.ZIP_DEFLATED if member == name else zipfile.ZIP_STORED)
    assert os.path.getsize(npz) < n
    tracemalloc.start()
    # It was inflated into its declared size: a file of a few KB made the loader allocate 8 MiB (or any size).
    with pytest.raises(GraphFormatError, match=r"array '.*' in .*g.npz is compressed .* graph.save never writes"):
        tl.graph.load(path)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < n


class _Tied(tl.Module):
    def __init__(self, seed):
        super().__init__()
        self.encoder = tl.nn.Dense(3, 3, seed=seed)
        self.decoder = self.encoder  # tied: one layer under two names

    def __call__(self, x):
        return self.decoder(tl.tanh(self.encoder(x)))


def test_tied_weights_saved_once_load_into_every_name_and_stay_tied(tmp_path):
    pytest.importorskip("safetensors")
    source = tl.nn.Dense(3, 3, seed=0)
    path = tmp_path / "once.safetensors"
    tl.save_variables(path, {"encoder": source})  # the tied layer under one of its names only
    model = _Tied(seed=1)
    # strict had said "missing from the file: ['decoder.kernel', 'decoder.bias']": the same Variables.
    assert tl.load_variables(path, model) is model
    assert model.decoder is model.encoder
    x = np.array([[0.5, -1.0, 2.0]], np.float32)
    k, b = source.kernel.numpy().astype(np.float64), source.bias.numpy().astype(np.float64)
    np.testing.assert_allclose(model(x).numpy(), np.tanh(x @ k + b) @ k + b, rtol=1e-6)
    # A name whose Variable is given by no other name is still missing, and nothing changes.
    other = _Tied(seed=2)
    other.decoder = tl.nn.Dense(3, 3, seed=3)
    before = other.decoder.kernel.numpy().copy()
    with pytest.raises(ValueError, match=r"missing from the file: \['decoder.kernel', 'decoder.bias'\]"):
        tl.load_variables(path, other)
    np.testing.assert_array_equal(other.decoder.kernel.numpy(), before)


@pytest.mark.parametrize("who", ["save_variables", "graph.save"])
def test_a_folder_that_refuses_writes_is_named_and_the_old_file_stays(tmp_path, monkeypatch, who):
    pytest.importorskip("safetensors")
    path = tmp_path / ("c.safetensors" if who == "save_variables" else "g.json")

    def save(value):
        if who == "save_variables":
            tl.save_variables(path, {"w": tl.Variable(value)})
        else:
            _times(value).save(path, SPEC)

    save(2.0)
    before = {name: (tmp_path / name).read_bytes() for name in os.listdir(tmp_path)}
    real_open = os.open

    def read_only_folder(name, flags, *args):  # as a folder without write permission answers (root ignores chmod)
        if flags & os.O_CREAT:
            raise PermissionError(13, "Permission denied", name)
        return real_open(name, flags, *args)

    monkeypatch.setattr(os, "open", read_only_folder)
    # It had said "[Errno 13] Permission denied: '.../.tmp-...'": a temporary's name, not the function or the file.
    with pytest.raises(PermissionError, match=rf"{who}: cannot write a file in the folder .* \(Permission denied\)"):
        save(3.0)
    monkeypatch.undo()
    assert {name: (tmp_path / name).read_bytes() for name in os.listdir(tmp_path)} == before

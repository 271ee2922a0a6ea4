"""Saving and loading graphs: round trips, captures, and files that must be refused without running anything."""

import json
import math
import os

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.graph import GraphFormatError
from tensorlib.graph.serialize import decode, encode

RNG = np.random.default_rng(0)


def _many_attrs(x, idx):
    parts = tl.split(x[..., 1:, None], [1, 2], axis=0)
    padded = tl.pad(tl.cast(parts[1], "float32"), ((0, 0), (1, 2), (0, 0)), constant_values=-1.5)
    hot = tl.one_hot(idx, 4, on_value=2.0, off_value=-math.inf, dtype="float64")
    summed = tl.einsum("ijk,ljk->il", padded, padded) + tl.take(x, idx, axis=1)[:1, :1]
    return {"a": summed, "b": (hot, tl.transpose(x)[::-1, 0]), "c": 3, "d": None}


def test_round_trip_gives_identical_results_and_listing(tmp_path):
    f = tl.function(_many_attrs)
    x, idx = RNG.standard_normal((3, 4)), np.array([3, 0, 1])
    graph = f.get_graph(x, idx)
    f.save(tmp_path / "g.json", x, idx)
    loaded = tl.graph.load(tmp_path / "g.json").verify()
    assert str(loaded) == str(graph)
    for feed in (x, RNG.standard_normal((3, 4))):
        want, got = f(feed, idx), loaded(feed, idx)
        assert got["c"] == 3 and got["d"] is None
        np.testing.assert_array_equal(got["a"].numpy(), want["a"].numpy())
        for g, w in zip(got["b"], want["b"]):
            assert g.dtype == w.dtype
            np.testing.assert_array_equal(g.numpy(), w.numpy())


def test_attribute_encoding_round_trips_with_explicit_type_tags():
    values = [
        None,
        True,
        3,
        -0.0,
        math.inf,
        (1, (2.5, "s")),
        [slice(None, -1, 2), Ellipsis, None],
        np.dtype("int32"),
        np.float32(1.5),
        {"k": (1,)},
        1.5 - 2j,  # before: "has a value of type complex that a graph file cannot hold"
        complex(math.inf, -0.0),
        np.complex64(1j),
    ]
    for v in values:
        encoded = json.loads(json.dumps(encode(v), allow_nan=False))
        back = decode(encoded)
        assert repr(back) == repr(v) and type(back) is type(v)
    assert encode((1, 2.0)) == {"$tuple": [1, {"$float": "2.0"}]}
    with pytest.raises(ValueError, match="x is a Python callable"):
        encode(len, "x")
    with pytest.raises(GraphFormatError, match="unknown attribute encoding '\\$pickle'"):
        decode({"$pickle": "gASV"})
    with pytest.raises(GraphFormatError, match="has no type tag"):
        decode([1, 2])


def test_graphs_with_complex_attributes_save_and_load(tmp_path):
    # Before: f.save raised "node 0 (FullLike) attribute 'value' has a value of type complex that a graph file
    # cannot hold" for tl.full_like(x, 1 + 2j) and pad's complex constant_values.
    x = np.array([1.0 + 1j, 2.0])
    for f in (lambda a: tl.full_like(a, 1 + 2j) * a, lambda a: tl.pad(a, [(1, 1)], constant_values=2j)):
        fn = tl.function(f)
        fn.save(tmp_path / "g.json", tl.TensorSpec((None,), "complex128"))
        loaded = tl.graph.load(tmp_path / "g.json")
        np.testing.assert_array_equal(loaded(x).numpy(), f(tl.tensor(x)).numpy())


def test_captures_are_not_saved_unless_asked_and_are_fed_by_name(tmp_path):
    table = RNG.standard_normal((50, 40))
    v = tl.Variable(np.zeros(40), name="acc")

    def fn(i):
        row = tl.take(table, i, axis=0)
        v.assign_add(tl.sum(row, axis=0))
        return row * 2.0

    f = tl.function(fn)
    i = np.array([1, 3])
    f.save(tmp_path / "lean.json", i)
    assert os.path.getsize(tmp_path / "lean.npz") < 2000  # the 16 kB table is not in the file
    lean = tl.graph.load(tmp_path / "lean.json")
    assert [(c.name, c.kind, c.shape) for c in lean.captures] == [("table", "feed", (50, 40)), ("acc", "feed", (40,))]
    with pytest.raises(TypeError, match=r"missing captures \['table', 'acc'\].*graph\(\.\.\., table=array\)"):
        lean(i)
    acc = tl.Variable(np.ones(40))
    np.testing.assert_array_equal(lean(i, table=table, acc=acc).numpy(), table[i] * 2.0)
    np.testing.assert_allclose(acc.numpy(), 1.0 + table[i].sum(0))
    with pytest.raises(TypeError, match="assigns to its capture; pass a tl.Variable"):
        lean(i, table=table, acc=np.ones(40))

    f.save(tmp_path / "full.json", i, include_captures=True)
    full = tl.graph.load(tmp_path / "full.json")
    np.testing.assert_array_equal(full(i).numpy(), table[i] * 2.0)
    saved_acc = full.captures[1].source
    np.testing.assert_allclose(saved_acc.numpy(), v.numpy() + table[i].sum(0))


def test_big_temporaries_of_the_trace_are_saved_even_without_captures(tmp_path):
    # A tensor or NumPy array the function makes while tracing, too big for a constant (1 KB), is fed by
    # reference (the graph does not embed it), but no caller could pass it to a loaded graph: it is saved
    # with the graph, while a closed-over array still is not.  It was a capture named 'capture' that a
    # graph saved without captures asked for on load.
    outside = RNG.standard_normal(3000)

    def fn(x):
        return x + tl.ones((3000,), dtype=tl.float64) * 2.0 + np.full(3000, 0.5) + outside

    f = tl.function(fn)
    x = RNG.standard_normal(3000)
    assert [c.kind for c in f.get_graph(x).captures] == ["temporary", "temporary", "array"]
    f.save(tmp_path / "g.json", x)
    g = tl.graph.load(tmp_path / "g.json")
    assert [c.kind for c in g.captures] == ["temporary", "temporary", "feed"]
    np.testing.assert_array_equal(g(x, outside=outside).numpy(), x + 2.0 + 0.5 + outside)
    with pytest.raises(TypeError, match=r"missing captures \['outside'\]"):
        g(x)
    g.save(tmp_path / "again.json")  # a loaded graph's temporaries stay temporaries
    np.testing.assert_array_equal(
        tl.graph.load(tmp_path / "again.json")(x, outside=outside).numpy(), g(x, outside=outside).numpy()
    )


def test_a_graph_with_a_python_gradient_function_is_refused_at_save_time(tmp_path):
    @tl.custom_gradient
    def clipped(x):
        return x * 1.0, lambda dy: tl.clip(dy, -1.0, 1.0)

    f = tl.function(lambda x: clipped(x) + 1.0)
    with pytest.raises(ValueError, match=r"node 1 \(CustomGradient\) attribute 'grad_fn' is a Python callable"):
        f.save(tmp_path / "c.json", np.ones(2))


def _saved(tmp_path, name="g"):
    f = tl.function(lambda x: tl.exp(x) * 2.0)
    f.save(tmp_path / f"{name}.json", np.ones(3))
    return tmp_path / f"{name}.json", tmp_path / f"{name}.npz"


def _edit_json(path, edit):
    doc = json.loads(path.read_text())
    edit(doc)
    path.write_text(json.dumps(doc))


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda d: d["nodes"][0].update(op="NoSuchOp"), "node 0 uses op type 'NoSuchOp', which is not registered"),
        (lambda d: d["nodes"][0].update(op="CustomGradient"), "'CustomGradient': its gradient is a Python function"),
        (lambda d: d.update(format="keras"), "not a tensorlib graph file"),
        (lambda d: d.update(version=99), "format version 99 is not supported"),
        (lambda d: d["nodes"][1]["outputs"][0].update(shape=[4]), r"node 1 \(Mul\) records output"),
        (lambda d: d["nodes"][1].update(inputs=[7, 1]), r"node 1 \(Mul\) uses value 7 before it is defined"),
        (lambda d: d["nodes"][0]["attrs"].update(bogus={"$tuple": []}), r"node 0 \(Exp\).*unknown attribute 'bogus'"),
        (lambda d: d["constants"][0].update(dtype="float32"), "array 'const_0' is float64"),
        (lambda d: d["inputs"][0].update(dtype="uint64"), "not supported"),
    ],
)
def test_malformed_files_raise_one_clear_error(tmp_path, edit, message):
    json_path, _ = _saved(tmp_path)
    _edit_json(json_path, edit)
    with pytest.raises(GraphFormatError, match=message):
        tl.graph.load(json_path)


class _Payload:
    ran = False

    def __reduce__(self):
        return (_mark_ran, ())


def _mark_ran():
    _Payload.ran = True
    return "ran"


def test_a_pickle_payload_is_refused_without_running_it(tmp_path):
    json_path, npz_path = _saved(tmp_path)
    token = json.loads(json_path.read_text())["token"]
    np.savez(npz_path, const_0=np.array([_Payload()], dtype=object), __token__=np.array(token), allow_pickle=True)
    with pytest.raises(GraphFormatError, match=r"array 'const_0' is object\[1\], the graph says"):
        tl.graph.load(json_path)
    assert not _Payload.ran


def test_truncated_corrupt_and_foreign_files_are_refused(tmp_path):
    json_path, npz_path = _saved(tmp_path)
    text = json_path.read_text()
    json_path.write_text(text[: len(text) // 2])
    with pytest.raises(GraphFormatError, match="unreadable JSON"):
        tl.graph.load(json_path)
    json_path, npz_path = _saved(tmp_path, "h")
    npz_path.write_bytes(npz_path.read_bytes()[:40])
    with pytest.raises(GraphFormatError, match="corrupt"):
        tl.graph.load(json_path)
    foreign = tmp_path / "foreign.json"
    foreign.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    with pytest.raises(GraphFormatError, match="not a tensorlib graph file"):
        tl.graph.load(foreign)
    foreign.write_text("[1, 2, 3]")
    with pytest.raises(GraphFormatError, match="not a tensorlib graph file"):
        tl.graph.load(foreign)
    assert issubclass(GraphFormatError, ValueError)


def test_the_seed_workload_saves_in_a_few_kilobytes(tmp_path):
    images = np.broadcast_to(np.float64(0.5), (60000, 32, 32, 1))  # 469 MiB logically, no memory
    filters = RNG.random((3, 3, 1, 6))

    def forward():
        conv = tl.nn.conv2d(images, filters, strides=[1, 1, 1, 1], padding="VALID")
        return tl.nn.relu(tl.nn.avg_pool(conv, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="VALID"))

    graph = tl.function(forward).get_graph()
    assert [(c.name, c.nbytes) for c in graph.captures] == [("images", 60000 * 32 * 32 * 8), ("filters", 432)]
    graph.save(tmp_path / "seed.json")
    size = os.path.getsize(tmp_path / "seed.json") + os.path.getsize(tmp_path / "seed.npz")
    assert size < 4096, f"{size} bytes"
    small = np.random.default_rng(1).random((2, 32, 32, 1))
    loaded = tl.graph.load(tmp_path / "seed.json")
    with pytest.raises(ValueError, match=r"capture 'images' must be float64\[60000, 32, 32, 1\]"):
        loaded(images=small)

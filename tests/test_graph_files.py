"""Graph files: atomic saves, lazy and checked array reads, hostile files refused with GraphFormatError."""

import io
import json
import os
import shutil
import sys
import tracemalloc
import zipfile

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.graph import GraphFormatError


def _save(tmp_path, factor, name="g"):
    f = tl.function(lambda x: tl.sum(x * tl.tensor(np.full(3, factor))))
    path = tmp_path / f"{name}.json"
    f.save(path, tl.TensorSpec((3,), "float64"))
    return path, tmp_path / f"{name}.npz"


def _value(path):
    return float(tl.graph.load(path)(np.ones(3)))


def test_save_replaces_both_files_and_leaves_no_temporaries(tmp_path):
    path, _ = _save(tmp_path, 2.0)
    _save(tmp_path, 3.0)
    assert _value(path) == 9.0
    assert sorted(os.listdir(tmp_path)) == ["g.json", "g.npz"]


def test_a_refused_rename_leaves_no_temporaries(tmp_path):
    os.mkdir(tmp_path / "g.json")  # the JSON's path is a folder: refused before either file is written
    with pytest.raises(OSError):
        _save(tmp_path, 3.0)
    assert sorted(os.listdir(tmp_path)) == ["g.json"]
    os.mkdir(tmp_path / "h.npz")
    with pytest.raises(OSError):
        _save(tmp_path, 3.0, "h")
    assert sorted(os.listdir(tmp_path)) == ["g.json", "h.npz"]


def test_a_fault_while_writing_leaves_the_old_files_loading(tmp_path, monkeypatch):
    path, _ = _save(tmp_path, 2.0)

    def broken_savez(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(np, "savez", broken_savez)
    with pytest.raises(OSError, match="disk full"):
        _save(tmp_path, 3.0)
    monkeypatch.undo()
    assert _value(path) == 6.0
    assert sorted(os.listdir(tmp_path)) == ["g.json", "g.npz"]


def test_a_fault_between_the_renames_never_loads_a_mix(tmp_path, monkeypatch):
    path, _ = _save(tmp_path, 2.0)
    real_replace, calls = os.replace, []

    def replace_then_crash(src, dst):
        calls.append(dst)
        if len(calls) == 2:
            raise OSError("power cut")
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace_then_crash)
    with pytest.raises(OSError, match="power cut"):
        _save(tmp_path, 3.0)
    monkeypatch.undo()
    with pytest.raises(GraphFormatError, match="belongs to another save of the graph"):
        tl.graph.load(path)


def test_files_of_two_saves_do_not_mix(tmp_path):
    a, a_npz = _save(tmp_path, 2.0, "a")
    _, b_npz = _save(tmp_path, 3.0, "b")
    shutil.copy(b_npz, a_npz)
    with pytest.raises(GraphFormatError, match="tokens differ"):
        tl.graph.load(a)


def _npy_header(shape, dtype):
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": np.dtype(dtype).str, "fortran_order": False, "shape": shape})
    return buf.getvalue()


def _add_member(npz, name, payload):
    with zipfile.ZipFile(npz, "a", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr(name + ".npy", payload)


def test_members_the_graph_does_not_name_are_never_read(tmp_path):
    path, npz = _save(tmp_path, 2.0)
    bomb = _npy_header((1 << 27,), "float64") + bytes(1 << 26)  # 64 MiB of zeros, 1 GiB declared
    _add_member(npz, "extra", bomb)
    assert os.path.getsize(npz) < 1 << 20
    tracemalloc.start()
    assert _value(path) == 6.0
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 8 << 20


def _replace_member(npz, name, payload):
    with zipfile.ZipFile(npz) as z:
        members = {i.filename: z.read(i) for i in z.infolist() if i.filename != name + ".npy"}
    with zipfile.ZipFile(npz, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for k, v in members.items():
            z.writestr(k, v)
        z.writestr(name + ".npy", payload)


def test_a_member_is_checked_against_the_graph_before_it_is_read(tmp_path):
    path, npz = _save(tmp_path, 2.0)
    _replace_member(npz, "const_0", _npy_header((1 << 27,), "float64") + bytes(1 << 20))
    tracemalloc.start()
    with pytest.raises(GraphFormatError, match=r"array 'const_0' is float64\[134217728\], the graph says float64\[3\]"):
        tl.graph.load(path)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 8 << 20
    _replace_member(npz, "const_0", _npy_header((3,), "float64") + bytes(1 << 22))  # header fits, body does not
    with pytest.raises(GraphFormatError, match=r"array 'const_0' takes \d+ bytes .*not the 24 its shape \[3\] needs"):
        tl.graph.load(path)


def test_a_declared_constant_larger_than_any_graph_holds_is_refused(tmp_path):
    path, npz = _save(tmp_path, 2.0)
    doc = json.loads(path.read_text())
    doc["constants"][0]["shape"] = [1 << 27]
    path.write_text(json.dumps(doc))
    with pytest.raises(GraphFormatError, match=r"a constant is declared as float64\[134217728\]"):
        tl.graph.load(path)


@pytest.mark.parametrize(
    "text",
    [
        "[" * 100000 + "]" * 100000,
        '{"format": "tensorlib.graph", "version": 2, "x": ' + "[" * 50000 + "]" * 50000 + "}",
    ],
)
def test_deeply_nested_json_is_a_format_error(tmp_path, text):
    path, _ = _save(tmp_path, 2.0)
    path.write_text(text)
    with pytest.raises(GraphFormatError, match="RecursionError"):
        tl.graph.load(path)


def test_deeply_nested_attributes_and_huge_shapes_are_format_errors(tmp_path):
    path, _ = _save(tmp_path, 2.0)
    doc = json.loads(path.read_text())
    doc["nodes"][-1]["attrs"] = {"axis": "NESTED"}
    # Deeper than the interpreter's recursion limit (importing TensorFlow raises it to 3000): decoding recurses too deep.
    depth = sys.getrecursionlimit() + 100
    nested = '{"$tuple": [' * depth + "1" + "]}" * depth
    path.write_text(json.dumps(doc).replace('"NESTED"', nested))
    with pytest.raises(GraphFormatError, match="RecursionError"):
        tl.graph.load(path)
    doc["nodes"][-1]["attrs"] = {}
    doc["inputs"][0]["shape"] = [2**64]
    path.write_text(json.dumps(doc))
    with pytest.raises(GraphFormatError, match="bad shape"):
        tl.graph.load(path)


def _patch_central_directory(npz, field_offset, value_bytes):
    """Overwrite a field of every central-directory entry (offsets from the entry's signature)."""
    data = bytearray(npz.read_bytes())
    start = 0
    while (start := data.find(b"PK\x01\x02", start)) >= 0:
        data[start + field_offset : start + field_offset + len(value_bytes)] = value_bytes
        start += 4
    npz.write_bytes(bytes(data))


@pytest.mark.parametrize(
    "field_offset, value, reason",
    [
        (10, b"\x63\x00", "compression method 99"),  # zipfile: NotImplementedError
        (8, b"\x01\x00", "encrypted flag"),  # zipfile: RuntimeError
        (8, b"\x20\x00", "patched-data flag"),  # zipfile: NotImplementedError
        (6, b"\xff\x00", "needs zip version 25.5"),  # zipfile: NotImplementedError
    ],
)
def test_damaged_zip_headers_are_format_errors(tmp_path, field_offset, value, reason):
    path, npz = _save(tmp_path, 2.0)
    _patch_central_directory(npz, field_offset, value)
    with pytest.raises(GraphFormatError, match="corrupt|not an .npz archive"):
        tl.graph.load(path)


def test_a_damaged_compressed_member_is_a_format_error(tmp_path):
    path, npz = _save(tmp_path, 2.0)
    with zipfile.ZipFile(npz) as z:
        payload = z.read("const_0.npy")
    _replace_member(npz, "const_0", payload)  # stored deflated now
    data = bytearray(npz.read_bytes())
    with zipfile.ZipFile(npz) as z:
        info = z.getinfo("const_0.npy")
    body = info.header_offset + 30 + len(info.filename)
    data[body : body + 4] = b"\xff\xff\xff\xff"  # deflate block type 3 (reserved): zlib.error
    npz.write_bytes(bytes(data))
    with pytest.raises(GraphFormatError, match="const_0.*corrupt"):
        tl.graph.load(path)


@pytest.mark.parametrize(
    "dtype",
    ["float16", "float32", "float64", "complex64", "complex128", "bool", "int8", "int16", "int32", "int64"]
    + ["uint8", "uint16", "uint32"],
)
def test_a_saved_graph_runs_on_every_dtype_its_function_took(tmp_path, dtype):
    # A loaded graph refused int8/int16/uint8/uint16/uint32 arguments that the tl.function it was saved from took.
    x = (np.arange(6).reshape(2, 3) % 2).astype(dtype)
    f = tl.function(lambda x: x + tl.tensor(np.arange(3).astype(dtype)))
    f.save(tmp_path / "g.json", x)
    expected = f(x)
    for graph in (tl.graph.load(tmp_path / "g.json"), f.get_graph(x)):
        out = graph(x)
        assert out.dtype == expected.dtype
        np.testing.assert_array_equal(out.numpy(), expected.numpy())


def _control_flow_file(tmp_path):
    def fn(x):
        y = tl.cond(tl.sum(x) > 0, lambda a: a * 2.0, lambda a: a - 1.0, x)
        c, ys = tl.scan(lambda c, e: (c + e, c * e), tl.zeros(()), y)
        return {"c": c, "ys": ys}

    path = tmp_path / "cf.json"
    tl.function(fn).save(path, np.ones(3, np.float32))
    return path, json.loads(path.read_text())


def _node(doc, op):
    return next(n for n in doc["nodes"] if n["op"] == op)


def _false_graph_returns_its_constant(doc):
    false_graph = _node(doc, "Cond")["attrs"]["false_graph"]["$graph"]
    false_graph["outputs"] = [false_graph["constants"][0]["id"]]  # float32[] where true_graph returns float32[3]


@pytest.mark.parametrize(
    "damage, message",
    [
        # The shape rules read only a subgraph's outputs: each of these loaded and failed in a kernel (or raised
        # AttributeError while loading).
        (lambda doc: _node(doc, "Scan")["inputs"].append(_node(doc, "Scan")["inputs"][0]), "subgraph body takes"),
        (lambda doc: _node(doc, "Scan")["attrs"].update(length=2), "does not have the length 2"),
        (lambda doc: _node(doc, "Cond")["attrs"].update(true_graph="x"), "attribute true_graph is not a graph"),
        (lambda doc: _node(doc, "Cond")["inputs"].append(_node(doc, "Cond")["inputs"][1]), "subgraph true_graph takes"),
        (lambda doc: _false_graph_returns_its_constant(doc), "return different shapes or dtypes"),
        (lambda doc: doc["structure"]["dict"][0].__setitem__(0, {"$slice": [0, None, 1]}), "bad output dict keys"),
        (lambda doc: _node(doc, "Cond")["inputs"].__setitem__(0, 0), "the predicate .* is not a scalar"),
        (lambda doc: _node(doc, "Scan")["inputs"].__setitem__(0, False), "uses value False before it is defined"),
    ],
)
def test_control_flow_nodes_and_outputs_that_do_not_fit_are_format_errors(tmp_path, damage, message):
    path, doc = _control_flow_file(tmp_path)
    assert tl.graph.load(path)(np.ones(3, np.float32))["c"].numpy() == 6.0
    damage(doc)
    path.write_text(json.dumps(doc))
    with pytest.raises(GraphFormatError, match=message):
        tl.graph.load(path)


def test_a_capture_of_unknown_kind_or_an_assignment_to_an_array_is_a_format_error(tmp_path):
    v = tl.Variable(np.ones(2))

    def step(x):
        v.assign(v * x)
        return v.read_value()

    path = tmp_path / "v.json"
    tl.function(step).save(path, np.ones(2), include_captures=True)
    doc = json.loads(path.read_text())
    for kind, message in (("x", "capture 'v' has an unknown kind 'x'"), ("array", "must assign a Variable capture")):
        doc["captures"][0]["kind"] = kind  # "array": the loaded graph would assign to a plain array
        path.write_text(json.dumps(doc))
        with pytest.raises(GraphFormatError, match=message):
            tl.graph.load(path)

"""Graph mode as an adversary, second round: hostile graph files.

A graph file whose attributes have the wrong type must be refused at load time with
GraphFormatError (the serialize module's contract), never load and then fail inside a kernel
when the graph runs.  Reference: the op's own attribute types (its defaults) and eager mode,
which normalizes ``keepdims`` to a bool before the op sees it.
"""

import json

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.graph import GraphFormatError


def _saved_sum(tmp_path):
    f = tl.function(lambda x: tl.sum(x, axis=0, keepdims=True))
    path = tmp_path / "g.json"
    f.get_graph(np.ones((2, 3), np.float32)).save(path)
    return path


@pytest.mark.parametrize("value", [{"$tuple": []}, "yes", None, {"$float": "1.0"}, {"$list": [True]}, 2**40])
def test_a_bool_attribute_of_another_type_is_a_format_error(tmp_path, value):
    path = _saved_sum(tmp_path)
    doc = json.loads(path.read_text())
    (node,) = [n for n in doc["nodes"] if n["op"] == "Sum"]
    node["attrs"]["keepdims"] = value
    path.write_text(json.dumps(doc))
    with pytest.raises(GraphFormatError, match=r"node 0 \(Sum\).*keepdims"):
        tl.graph.load(path)


def test_a_saved_bool_attribute_loads_and_runs_as_eager(tmp_path):
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    g = tl.graph.load(_saved_sum(tmp_path))
    np.testing.assert_array_equal(g(x).numpy(), x.sum(axis=0, keepdims=True))


def test_a_flag_given_as_an_int_round_trips(tmp_path):
    # tl.scan(..., reverse=1) records the int; its file must load and run as the traced graph does.
    x = np.arange(6, dtype=np.float64).reshape(3, 2)
    f = tl.function(lambda xs: tl.scan(lambda c, r: (c * 2.0 + r, c), np.zeros(2), xs, reverse=1))
    path = tmp_path / "scan.json"
    f.get_graph(x).save(path)
    carry, ys = tl.graph.load(path)(x)
    expected, history = np.zeros(2), []
    for row in x[::-1]:
        history.append(expected)
        expected = expected * 2.0 + row
    np.testing.assert_array_equal(carry.numpy(), expected)
    np.testing.assert_array_equal(ys.numpy(), np.stack(history[::-1]))


def _saved(tmp_path, fn, *args):
    path = tmp_path / "g.json"
    tl.function(fn).get_graph(*args).save(path)
    return path, json.loads(path.read_text())


@pytest.mark.parametrize("value", ["x", {"$dtype": "int32"}, {"$slice": [None, None, None]}, {"$dict": []}])
def test_a_number_attribute_holding_a_string_dtype_or_slice_is_a_format_error(tmp_path, value):
    path, doc = _saved(tmp_path, lambda i: tl.one_hot(i, 4, on_value=2.0), np.array([0, 3]))
    (node,) = [n for n in doc["nodes"] if n["op"] == "OneHot"]
    node["attrs"]["on_value"] = value
    path.write_text(json.dumps(doc))
    with pytest.raises(GraphFormatError, match=r"\(OneHot\).*on_value.*not a number"):
        tl.graph.load(path)

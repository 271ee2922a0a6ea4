"""Nested structures through tl.function, graph files and control flow: one tree module (issues 7.7 and 8)."""

import collections
import json

import numpy as np
import pytest

import tensorlib as tl
from tensorlib import tree
from tensorlib.graph.serialize import GraphFormatError

Pair = collections.namedtuple("Pair", ["a", "b"])


def f64(v):
    return tl.tensor(v, dtype="float64")


def _same(got, want):
    """Same structure (containers, named tuple field names, constants) and the same values at the leaves."""
    got_leaves, got_def = tree.flatten(got, is_constant=lambda v: not isinstance(v, tl.Tensor))
    want_leaves, want_def = tree.flatten(want, is_constant=lambda v: not isinstance(v, tl.Tensor))
    assert repr(got_def) == repr(want_def)
    for g, w in zip(got_leaves, want_leaves):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-12)


def _model(p):
    h = p["w"] * p["pair"].a + p["pair"].b
    return {
        "sum": tl.sum(h * p["scale"]),
        "parts": Pair(h, [p["items"][0] * 2.0, None]),
        "count": 3,
        "tag": "done",
        "nothing": None,
    }


def _params(k=1.0):
    return {
        "w": f64([1.0, 2.0]) * k,
        "pair": Pair(f64([3.0, 4.0]), f64(0.5) * k),
        "items": [f64([[1.0], [2.0]]), None],
        "scale": 2.0,
    }


# ---------------------------------------------------------------- tl.function


def test_traced_nested_arguments_and_results_equal_eager():
    f = tl.function(_model)
    for k in (1.0, 3.0, -2.0):
        out = f(_params(k))
        _same(out, _model(_params(k)))
        assert type(out["parts"]) is Pair and out["count"] == 3 and out["tag"] == "done" and out["nothing"] is None
    assert f.trace_count == 1  # new values in the same structure reuse the graph (the float is fed too)


def test_named_tuple_arguments_are_placeholders_not_captures():
    f = tl.function(lambda pair: pair.a * pair.b)
    assert f(Pair(f64([1.0, 2.0]), f64([3.0, 4.0]))).numpy().tolist() == [3.0, 8.0]
    assert f(Pair(f64([5.0, 6.0]), f64([1.0, 0.5]))).numpy().tolist() == [5.0, 3.0]
    assert f.trace_count == 1
    graph = f.get_graph(Pair(tl.TensorSpec((2,), "float64"), tl.TensorSpec((2,), "float64")))
    assert graph.input_names == ["pair[0]", "pair[1]"] and not graph.captures


def test_a_changed_structure_retraces_and_the_reason_draws_both():
    f = tl.function(lambda p: p["a"] + p["b"])
    f({"a": f64(1.0), "b": f64(2.0)})
    f({"b": f64(2.0), "a": f64(1.0)})
    f({"b": f64(2.0), "a": f64(1.0), "c": None})
    assert f.retrace_reasons[1:] == [
        "p: {'a': *, 'b': *} -> {'b': *, 'a': *}",
        "p: {'b': *, 'a': *} -> {'b': *, 'a': *, 'c': None}",
    ]


def test_gradients_flow_through_a_traced_nested_function():
    f = tl.function(lambda p: _model(p)["sum"])
    g_traced = tl.grad(f)(_params())
    g_eager = tl.grad(lambda p: _model(p)["sum"])(_params())
    _same(g_traced, g_eager)
    assert g_traced["items"][1] is None


def test_a_traced_function_returning_an_unsupported_leaf_is_a_clear_error():
    with pytest.raises(TypeError, match=r"^tl.function: the function returned a ndarray"):
        tl.function(lambda x: (x, np.ones(2)))(f64([1.0]))


# ---------------------------------------------------------------- graph files


def _spec_params():
    spec = tl.TensorSpec
    return {
        "w": spec((2,), "float64"),
        "pair": Pair(spec((2,), "float64"), spec((), "float64")),
        "items": [spec((2, 1), "float64"), None],
        "scale": 2.0,
    }


def _flat_inputs(p):
    return [p["w"], p["pair"].a, p["pair"].b, p["items"][0], f64(p["scale"])]


def test_a_saved_and_loaded_graph_returns_the_same_structure(tmp_path):
    tl.function(_model).save(tmp_path / "m.json", _spec_params())
    loaded = tl.graph.load(tmp_path / "m.json")
    out = loaded(*_flat_inputs(_params(2.0)))
    want = _model(_params(2.0))
    assert out["parts"].__class__.__name__ == "Pair" and out["parts"]._fields == ("a", "b")
    assert out["count"] == 3 and out["tag"] == "done" and out["nothing"] is None
    np.testing.assert_allclose(out["sum"].numpy(), want["sum"].numpy())
    np.testing.assert_allclose(out["parts"].b[0].numpy(), want["parts"].b[0].numpy())
    # Loading twice gives equal structures (one named tuple type per name and fields).
    assert tl.graph.load(tmp_path / "m.json").structure == loaded.structure


def _as_version_2(node):
    """The output structure as tensorlib wrote it before version 3: a named tuple saved as a tuple."""
    if isinstance(node, dict):
        ((kind, body),) = node.items()
        if kind == "namedtuple":
            return {"tuple": [_as_version_2(x) for x in body[2]]}
        if kind in ("tuple", "list"):
            return {kind: [_as_version_2(x) for x in body]}
        if kind == "dict":
            return {"dict": [[k, _as_version_2(v)] for k, v in body]}
    return node


def test_graph_files_of_versions_1_and_2_still_load(tmp_path):
    path = tmp_path / "m.json"
    tl.function(_model).save(path, _spec_params())
    doc = json.loads(path.read_text())
    assert doc["version"] == 4
    assert doc["structure"]["dict"][1][1] == {
        "namedtuple": ["Pair", ["a", "b"], [{"tensor": 1}, {"list": [{"tensor": 2}, {"const": None}]}]]
    }
    doc["version"] = 2
    doc["structure"] = _as_version_2(doc["structure"])
    path.write_text(json.dumps(doc))
    out = tl.graph.load(path)(*_flat_inputs(_params()))
    assert type(out["parts"]) is tuple and out["count"] == 3 and out["nothing"] is None
    np.testing.assert_allclose(out["parts"][0].numpy(), _model(_params())["parts"].a.numpy())
    del doc["token"]  # version 1 files had no token shared with the .npz
    doc["version"] = 1
    path.write_text(json.dumps(doc))
    assert tl.graph.load(path)(*_flat_inputs(_params()))["tag"] == "done"


def _saved_pair(tmp_path):
    path = tmp_path / "p.json"
    tl.function(lambda x: Pair(x * 2.0, (x, "s"))).save(path, tl.TensorSpec((2,), "float64"))
    return path


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda s: s["namedtuple"][2][1]["tuple"].__setitem__(0, {"tensor": 0}), "bad output structure"),
        (lambda s: s["namedtuple"].__setitem__(1, ["a", "not a name"]), "bad named tuple 'Pair'"),
        (lambda s: s["namedtuple"].__setitem__(1, ["a"]), "bad output structure"),
        (lambda s: s["namedtuple"][2].__setitem__(1, {"const": None}), r"holds 1 tensors for 2 outputs"),
        (lambda s: s["namedtuple"].__setitem__(0, "import os"), "bad named tuple"),
    ],
)
def test_bad_output_structures_are_graph_format_errors(tmp_path, edit, message):
    path = _saved_pair(tmp_path)
    doc = json.loads(path.read_text())
    assert doc["structure"] == {
        "namedtuple": ["Pair", ["a", "b"], [{"tensor": 0}, {"tuple": [{"tensor": 1}, {"const": "s"}]}]]
    }
    edit(doc["structure"])
    path.write_text(json.dumps(doc))
    with pytest.raises(GraphFormatError, match=message):
        tl.graph.load(path)


# ---------------------------------------------------------------- control flow


def _branches():
    def true_fn(p):
        return {"y": p["x"] * 2.0, "pair": Pair(p["pair"].a + 1.0, None)}

    def false_fn(p):
        return {"y": -p["x"], "pair": Pair(p["pair"].a * p["pair"].b, None)}

    return true_fn, false_fn


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_cond_with_nested_operands_and_results_traced_equals_eager(sign):
    true_fn, false_fn = _branches()

    def f(p):
        return tl.cond(tl.sum(p["x"]) > 0, true_fn, false_fn, p)

    p = {"x": f64([1.0, 2.0]) * sign, "pair": Pair(f64(3.0), f64(4.0))}
    traced = tl.function(f)(p)
    _same(traced, f(p))
    assert type(traced["pair"]) is Pair and traced["pair"].b is None
    _same(tl.grad(lambda q: tl.sum(tl.function(f)(q)["y"]))(p), tl.grad(lambda q: tl.sum(f(q)["y"]))(p))


def test_while_loop_with_a_nested_state_traced_equals_eager():
    def f(x):
        state = {"i": tl.tensor(0), "acc": Pair(x, [x * 0.0])}
        return tl.while_loop(
            lambda s: s["i"] < 3,
            lambda s: {"i": s["i"] + 1, "acc": Pair(s["acc"].a * 2.0, [s["acc"].b[0] + s["acc"].a])},
            state,
        )

    x = f64([1.0, -1.5])
    out = tl.function(f)(x)
    _same(out, f(x))
    assert out["acc"].a.numpy().tolist() == [8.0, -12.0] and out["acc"].b[0].numpy().tolist() == [7.0, -10.5]


def test_scan_with_nested_carry_xs_and_ys_traced_equals_eager_with_gradients():
    def step(carry, x):
        total = carry["total"] + x.a * carry["scale"]
        return {"total": total, "scale": carry["scale"] * 1.5}, Pair(total, {"sq": x.b * x.b})

    def f(init, xs):
        return tl.scan(step, init, xs)

    init = {"total": f64([0.0, 1.0]), "scale": f64(2.0)}
    xs = Pair(f64([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]), f64([1.0, 2.0, 3.0]))
    traced = tl.function(f)(init, xs)
    _same(traced, f(init, xs))
    carry, ys = traced
    assert type(ys) is Pair and list(ys.b) == ["sq"] and ys.a.shape == (3, 2)

    def loss(fn):
        return lambda i, x: tl.sum(fn(i, x)[1].a) + tl.sum(fn(i, x)[0]["total"])

    _same(tl.grad(loss(tl.function(f)), argnums=(0, 1))(init, xs), tl.grad(loss(f), argnums=(0, 1))(init, xs))


def test_control_flow_structure_mismatches_draw_both_structures():
    x = np.ones(2)
    with pytest.raises(
        TypeError, match=r"\(the nesting differs: true_fn returns \(\*, \*\), false_fn returns \[\*, \*\]\)"
    ):
        tl.function(lambda v: tl.cond(tl.sum(v) > 0, lambda u: (u, u), lambda u: [u, u], v))(x)
    with pytest.raises(
        TypeError, match=r"\(the nesting differs: loop_vars are \{'a': \*\}, body_fn returns \{'b': \*\}\)"
    ):
        tl.function(lambda v: tl.while_loop(lambda s: tl.sum(s["a"]) < 3.0, lambda s: {"b": s["a"] * 2.0}, {"a": v}))(x)
    for fn in (tl.function(lambda v: tl.scan(lambda c, u: ([c[0]], u), (v[0],), v)), None):
        call = fn or (lambda v: tl.scan(lambda c, u: ([c[0]], u), (v[0],), v))
        with pytest.raises(TypeError, match=r"\(the nesting differs: init is \(\*,\), f's carry is \[\*\]\)"):
            call(tl.tensor(x))
    with pytest.raises(TypeError, match=r"tl.scan: f must return a pair \(carry, y\), got \(\*, \*, \*\)"):
        tl.function(lambda v: tl.scan(lambda c, u: (c, u, u), v[0], v))(x)


# ---------------------------------------------------------------- one structure, every consumer


def test_every_consumer_reads_one_structure_alike():
    """An OrderedDict holding a named tuple, a list and a None slot: the gradient transforms, the tape,
    tl.function, cond, the optimizer and clipping all see the same two leaves and give back its shape."""
    w, b = tl.Variable(np.array([1.0, 2.0])), tl.Variable(np.array(0.5))
    params = collections.OrderedDict(layer=Pair(w, [b]), frozen=None)
    want = "{'layer': Pair(*, [*]), 'frozen': None}"
    assert repr(tree.flatten(params)[1]) == want

    def loss(p):
        return tl.sum(p["layer"].a * p["layer"].b[0]) + tl.sum(p["layer"].a)

    grads = tl.grad(loss)(params)
    assert repr(tree.flatten(grads)[1]) == want
    with tl.GradientTape() as tape:
        value = loss(params)
    assert repr(tree.flatten(tape.gradient(value, params))[1]) == want
    traced = tl.function(lambda p: tl.grad(loss)(p))(params)
    assert repr(tree.flatten(traced)[1]) == want
    branch = tl.function(lambda p: tl.cond(tl.sum(p["layer"].a) > 0, lambda q: q, lambda q: q, p))(params)
    assert repr(tree.flatten(branch)[1]) == want and isinstance(branch["layer"], Pair)
    clipped, _ = tl.optimizers.clip_by_global_norm(grads, 1.0)
    assert repr(tree.flatten(clipped)[1]) == want
    np.testing.assert_allclose(grads["layer"].a.numpy(), [1.5, 1.5])
    np.testing.assert_allclose(float(grads["layer"].b[0]), 3.0)
    for g, t in zip(tree.leaves(grads), tree.leaves(traced)):
        np.testing.assert_allclose(g.numpy(), t.numpy())
    tl.optimizers.SGD(1.0).apply(grads, params)
    np.testing.assert_allclose(w.numpy(), [-0.5, 0.5])
    np.testing.assert_allclose(float(b), -2.5)


def test_distributed_value_and_grad_keeps_a_nested_parameter_structure():
    dask = pytest.importorskip("dask")
    da = pytest.importorskip("dask.array")
    a = np.random.default_rng(3).standard_normal((30, 2))
    params = {"lin": Pair(np.array([1.0, -1.0]), np.array(0.5)), "unused": None}

    def loss(p, x):
        return tl.mean((tl.sum(x * p["lin"].a, axis=1) + p["lin"].b) ** 2)

    with dask.config.set(scheduler="threads"):
        value, grads = tl.distributed.value_and_grad(loss, params, da.from_array(a, chunks=(7, 2)))
    want_value, want = tl.value_and_grad(loss)({"lin": Pair(f64([1.0, -1.0]), f64(0.5)), "unused": None}, f64(a))
    assert grads["unused"] is None and type(grads["lin"]) is Pair
    np.testing.assert_allclose(float(value), float(want_value), rtol=1e-12)
    np.testing.assert_allclose(grads["lin"].a.numpy(), want["lin"].a.numpy(), rtol=1e-12)
    np.testing.assert_allclose(float(grads["lin"].b), float(want["lin"].b), rtol=1e-12)

"""Graph mode's leftovers (tl.function, saved graphs), attacked as an adversary.

What it attacks, and against which references:
- threads: a traced function that updates Variables (assign_add, in the body and in a tl.cond branch), called
  from several threads at once, and mixed with eager assign_add in other threads, loses no update (the serial
  count is the reference; TF's AssignAddVariableOp is atomic per variable);
- tl.profiler.annotate inside a traced function: the nodes keep their scopes (print(graph), saved files) and
  tl.profile of the traced runs (interpreted, compiled, replayed for a tape, loaded) labels each op as the
  eager run of the same function does (the eager profile is the reference);
- tl.TensorSpec(None) (unknown rank) in input_signature: one trace per rank, values against NumPy;
- a bound tl.function method's get_graph/save/attributes, against x @ w of the instance's weights;
- hostile graph files: an attribute of the wrong kind (a list axis, a tuple alpha, a string on_value, ...) is a
  GraphFormatError naming node, op and attribute at load; a sweep of every registered op's attributes; legal
  files (explicit conv padding, per-axis pad values, a scan of unknown length) still load, against eager/NumPy;
- a traced or loaded graph called with its function's nested and keyword arguments (NumPy reference);
- integer overflow: tl.tensor(traced int64, dtype=int32) and a traced narrowing Variable.assign raise the
  eager OverflowError when they run, and convert what fits (the eager calls are the reference);
- a custom_gradient arity error counts the user's inputs (eager, traced, second order traced).
"""

import numpy as np
import pytest

import tensorlib as tl
from tests.test_contracts_threads import _run_threads


@pytest.fixture
def often_switching_threads():
    import sys

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads between any two bytecodes: a lost update shows at once
    yield
    sys.setswitchinterval(old)


def test_traced_assign_add_from_several_threads_loses_no_update(often_switching_threads):
    counter = tl.Variable(np.zeros(3), name="counter")
    other = tl.Variable(np.zeros(()), name="other")

    @tl.function
    def step(d):
        counter.assign_add(d)
        tl.cond(tl.sum(d) > 0, lambda: other.assign_add(1.0), lambda: other.assign_sub(1.0))
        return counter + 0.0

    one = tl.tensor(np.ones(3))
    step(tl.tensor(np.zeros(3)))
    counter.assign(np.zeros(3))
    other.assign(0.0)
    calls, threads = 150, 4

    def traced():
        for _ in range(calls):
            step(one)

    def eager():
        for _ in range(calls):
            counter.assign_add(np.ones(3))

    _run_threads([traced] * threads + [eager])
    np.testing.assert_array_equal(counter.numpy(), np.full(3, calls * (threads + 1.0)))
    assert float(other.numpy()) == calls * threads


def _scoped(x):
    with tl.profiler.annotate("layer1"):
        h = tl.exp(x) * 2.0
        with tl.profiler.annotate("inner"):
            h = tl.sin(h)
    return tl.sum(h)


def _profiled(fn, x):
    with tl.profile() as prof:
        with tl.profiler.annotate("step"):
            fn(x)
    return [(e.op_type, e.scope) for e in prof.events]


def test_annotate_scopes_reach_the_nodes_of_a_traced_function(tmp_path):
    f = tl.function(_scoped)
    x = tl.tensor(np.arange(3.0))
    eager = _profiled(_scoped, x)  # the reference: each op in the blocks it ran in
    assert eager == [("Exp", "step/layer1"), ("Mul", "step/layer1"), ("Sin", "step/layer1/inner"), ("Sum", "step")]
    for _ in range(3):  # the first run interprets the plan, later ones run it compiled
        assert _profiled(f, x) == eager
    graph = f.get_graph(x)
    assert [n.scope for n in graph.nodes] == [("layer1",), ("layer1",), ("layer1", "inner"), ()]
    listing = str(graph)
    assert "Sin(%3) : float64[3]  # scope layer1/inner" in listing
    assert "Sum(%4) axis=None keepdims=False : float64[]\n" in listing
    f.save(tmp_path / "g", x)
    loaded = tl.graph.load(tmp_path / "g")
    assert [n.scope for n in loaded.nodes] == [n.scope for n in graph.nodes]
    assert _profiled(loaded, x) == eager
    with tl.GradientTape() as tape:  # replayed op by op for the tape: the same scopes
        tape.watch(x)
        assert _profiled(f, x) == eager


def _branching(x):
    with tl.profiler.annotate("outer"):

        def branch():
            with tl.profiler.annotate("branch"):
                return tl.exp(x)

        y = tl.cond(tl.sum(x) > 0, branch, lambda: x)
    return tl.sum(y)


def test_annotate_scopes_in_a_branch_nest_once_in_every_run():
    x = tl.tensor(np.ones(2))
    f = tl.function(_branching)

    def ops(fn):  # the Cond node itself has no eager op
        return [e for e in _profiled(fn, x) if e[0] != "Cond"]

    eager = ops(_branching)
    assert ("Exp", "step/outer/branch") in eager
    assert ops(f) == eager and ops(f) == eager  # interpreted, then compiled
    with tl.GradientTape() as tape:  # replayed: the Cond runs its branch inside the Cond's scope
        tape.watch(x)
        assert ops(f) == eager
    branch = f.get_graph(x).nodes[2].attrs["true_graph"]
    assert [n.scope for n in branch.nodes] == [("branch",)]  # relative to the Cond node, scoped ("outer",)


def test_a_graph_optimized_inside_an_annotate_block_keeps_its_own_scopes():
    f = tl.function(lambda x: tl.sum(tl.exp(x) * 1.0))  # the pass drops the Mul; its Exp has no scope
    with tl.profiler.annotate("outer"):
        f(tl.tensor([1.0]))
    assert [(n.op_type, n.scope) for n in f.get_graph(tl.tensor([1.0])).optimize().nodes] == [
        ("Exp", ()),
        ("Sum", ()),
    ]


def test_a_tensorspec_of_unknown_rank_traces_once_per_rank():
    @tl.function(input_signature=[tl.TensorSpec(None, "float64"), tl.TensorSpec((None,), "float64")])
    def f(x, w):
        return tl.sum(x * w, axis=-1)

    rng = np.random.default_rng(0)
    for shape in [(3,), (2, 3), (5, 3), (2, 4, 3), (1, 2, 3)]:
        x, w = rng.normal(size=shape), rng.normal(size=3)
        np.testing.assert_allclose(f(x, w).numpy(), np.sum(x * w, axis=-1), rtol=1e-12)
    assert f.trace_count == 3  # ranks 1, 2 and 3 (tf.function(input_signature=[tf.TensorSpec(None)]) alike)
    assert f.retrace_reasons[1] == "x.shape: (None,) -> (None, None)"
    assert [d for d in f.get_graph(tl.TensorSpec((None, None), "float64"), w).inputs[0].shape] == [None, None]
    with pytest.raises(ValueError, match=r"f: x has shape \(3,\) and dtype float32, which does not fit"):
        f(np.zeros(3, np.float32), w)
    with pytest.raises(TypeError, match=r"f.get_graph\(\): TensorSpec\(None, float64\) has an unknown rank"):
        f.get_graph()
    with pytest.raises(TypeError, match=r"tl.function.get_graph: TensorSpec\(None, float32\) has an unknown rank"):
        tl.function(lambda x: x).get_graph(tl.TensorSpec(None))
    assert tl.TensorSpec(None).ndim is None
    assert tl.TensorSpec(None, "int32").is_compatible_with((), "int32")


class _Dense:
    def __init__(self, w):
        self.w = tl.Variable(w)

    @tl.function
    def call(self, x, scale=1.0):
        return (x @ self.w) * scale


def test_a_bound_tl_function_method_has_get_graph_save_and_the_function_api(tmp_path):
    import inspect

    rng = np.random.default_rng(1)
    w, x = rng.normal(size=(3, 2)), rng.normal(size=(4, 3))
    layer = _Dense(w)
    np.testing.assert_allclose(layer.call(x, 2.0).numpy(), 2.0 * x @ w, rtol=1e-12)
    graph = layer.call.get_graph(tl.TensorSpec((None, 3), "float64"), 2.0)
    assert graph.input_names == ["x", "scale"] and graph.inputs[0].shape == (None, 3)
    assert [c.source for c in graph.captures] == [layer.w]  # this instance's Variable
    np.testing.assert_allclose(graph(x, 0.5).numpy(), 0.5 * x @ w, rtol=1e-12)
    np.testing.assert_allclose(graph(scale=0.5, x=x).numpy(), 0.5 * x @ w, rtol=1e-12)  # as the method takes them
    layer.call.save(tmp_path / "dense", x, 3.0, include_captures=True)
    np.testing.assert_allclose(tl.graph.load(tmp_path / "dense")(x, 3.0).numpy(), 3.0 * x @ w, rtol=1e-12)
    assert layer.call.trace_count == _Dense.call.trace_count and layer.call.cache_info()["traces"] >= 2
    assert layer.call.python_function is _Dense.call.python_function
    assert str(inspect.signature(layer.call)) == "(x, scale=1.0)"
    other = _Dense(-w)  # another instance: its own graph, its own Variable
    assert other.call.get_graph(x, 1.0).captures[0].source is other.w


def _corrupted(tmp_path, fn, x, op_type, attr, value):
    """Save ``fn`` traced for ``x``, then set attribute ``attr`` of its ``op_type`` node to ``value``."""
    import json

    from tensorlib.graph.serialize import encode

    path = tmp_path / f"{op_type}_{attr}"
    tl.function(fn).save(path, x)
    doc = json.loads(path.read_text())
    (node,) = [n for n in doc["nodes"] if n["op"] == op_type]
    node["attrs"][attr] = encode(value)
    path.write_text(json.dumps(doc))
    return path


@pytest.mark.parametrize(
    "fn, op_type, attr, value",
    [
        (lambda x: tl.sum(x, axis=(0, 1)), "Sum", "axis", [0, 1]),
        (lambda x: tl.sum(x, axis=-1), "Sum", "axis", True),
        (lambda x: tl.sum(x, axis=-1), "Sum", "axis", 1.0),
        (lambda x: tl.nn.leaky_relu(x, 0.1), "LeakyRelu", "alpha", (0.1, 0.2)),
        (lambda x: tl.nn.leaky_relu(x, 0.1), "LeakyRelu", "alpha", None),
        (lambda x: tl.one_hot(tl.argmax(x, axis=-1), 4), "OneHot", "on_value", "1"),
        (lambda x: tl.pad(x, 1), "PadV2", "constant_values", ()),
        (lambda x: tl.transpose(x), "Transpose", "perm", [1, 0, 2]),
        (lambda x: tl.nn.dropout(x, 0.5, seed=1), "Dropout", "seed", 1.5),
        (lambda x: tl.cast(x, "float32"), "Cast", "dtype", "float32"),
    ],
)
def test_a_graph_file_with_an_ill_typed_attribute_is_refused_at_load(tmp_path, fn, op_type, attr, value):
    from tensorlib.graph.serialize import GraphFormatError

    x = np.arange(24.0).reshape(2, 3, 4)
    path = _corrupted(tmp_path, fn, x, op_type, attr, value)
    with pytest.raises(GraphFormatError, match=rf"node \d+ \({op_type}\) .*attribute {attr} is "):
        tl.graph.load(path)


def test_every_attribute_of_every_op_has_a_kind_the_loader_checks():
    """The sweep: each registered op's attributes, by their defaults; a None default needs a named kind."""
    from tensorlib.graph.serialize import NONE_DEFAULT_KINDS, SUBGRAPH_ATTRIBUTES, _check_attribute_kinds
    from tensorlib.ops.registry import _ops

    unnamed = set()
    for op in _ops.values():
        _check_attribute_kinds(op, dict(op.defaults))  # the defaults themselves pass
        unnamed |= {
            f"{op.name}.{name}"
            for name, default in op.defaults.items()
            if default is None and name not in NONE_DEFAULT_KINDS and name not in SUBGRAPH_ATTRIBUTES
        }
    assert unnamed <= {"CustomGradient.grad_fn"}  # a Python callable: never saved, refused at load


def test_legal_attribute_values_still_load(tmp_path):
    x = np.arange(24.0).reshape(2, 3, 4)
    for fn in (
        lambda x: tl.sum(x, axis=(0, 2), keepdims=True),
        lambda x: tl.pad(x, ((0, 0), (1, 1), (0, 0)), constant_values=2.5),
        lambda x: tl.nn.conv2d(x[..., None], np.ones((2, 2, 1, 1)), 1, ((0, 0), (1, 0), (0, 1), (0, 0))),
        lambda x: tl.squeeze(x[:1]),
    ):
        tl.function(fn).save(tmp_path / "ok", x)
        np.testing.assert_allclose(tl.graph.load(tmp_path / "ok")(x).numpy(), fn(tl.tensor(x)).numpy())
    # a scan over a dimension of unknown size saves length None
    cumulative = tl.function(lambda xs: tl.scan(lambda c, v: (c + v, c + v), tl.tensor(0.0, dtype="float64"), xs)[1])
    cumulative.save(tmp_path / "scan", tl.TensorSpec((None,), "float64"))
    np.testing.assert_array_equal(tl.graph.load(tmp_path / "scan")(np.arange(5.0)).numpy(), np.cumsum(np.arange(5.0)))


def _affine(params, x, scale=1.0, *, mode="sum"):
    y = (x @ params["w"] + params["pair"][1]) * scale
    return tl.sum(y) if mode == "sum" else y


def test_a_loaded_graph_takes_the_nested_and_keyword_arguments_of_its_function(tmp_path):
    rng = np.random.default_rng(2)
    params = {"w": rng.normal(size=(3, 2)), "pair": (np.ones(2), rng.normal(size=2))}
    x = rng.normal(size=(4, 3))
    expected = np.sum((x @ params["w"] + params["pair"][1]) * 2.0)  # NumPy
    f = tl.function(_affine)
    f.save(tmp_path / "affine", params, x, 2.0, mode="sum")
    for graph in (f.get_graph(params, x, 2.0, mode="sum"), tl.graph.load(tmp_path / "affine")):
        for call in (
            lambda: graph(params, x, 2.0, mode="sum"),
            lambda: graph(params, x=x, scale=2.0, mode="sum"),
            lambda: graph(mode="sum", x=x, params=params, scale=2.0),
            lambda: graph(params["w"], params["pair"][0], params["pair"][1], x, 2.0),  # the flat inputs, as before
        ):
            np.testing.assert_allclose(float(call()), expected, rtol=1e-12)
        with pytest.raises(ValueError, match="mode is 'mean'; the graph was traced for 'sum'"):
            graph(params, x, 2.0, mode="mean")
        with pytest.raises(TypeError, match=r"takes the arguments \(params, x, scale, mode\), as traced"):
            graph(params, x, 2.0)
        with pytest.raises(TypeError, match=r"params must be a dict with keys \['w', 'pair'\]"):
            graph({"w": params["w"]}, x, 2.0, mode="sum")
        with pytest.raises(TypeError, match=r"params\['pair'\] must be a tuple of 2 items"):
            graph({"w": params["w"], "pair": (x,)}, x, 2.0, mode="sum")


def test_a_traced_narrowing_tensor_conversion_overflows_as_the_eager_one():
    big = np.array([2**40, 1], np.int64)
    convert = tl.function(lambda x: tl.tensor(x, dtype="int32"))
    message = r"tensor: data holds 1099511627776, which does not fit in int32 \(range -2147483648\.\.2147483647\)"
    with pytest.raises(OverflowError, match=message):
        tl.tensor(tl.tensor(big), dtype="int32")  # eager: the reference (NumPy's np.array(big).astype wraps)
    with pytest.raises(OverflowError, match=message):
        convert(tl.tensor(big))
    fits = np.array([-(2**31), 2**31 - 1, 0], np.int64)
    out = convert(tl.tensor(fits))
    assert out.dtype == np.int32 and out.numpy().tolist() == fits.tolist()
    with pytest.raises(OverflowError, match=r"holds -3000000000.0, which does not fit in int32"):
        tl.function(lambda x: tl.tensor(x, dtype="int32"))(tl.tensor(np.array([-3e9, 1.0])))
    assert convert(tl.tensor(np.zeros(0, np.int64))).shape == (0,)


def test_a_custom_gradient_arity_error_counts_the_users_inputs():
    def loss(x):
        y = x * 3.0

        @tl.custom_gradient
        def f(a, b):  # closes over y: the rule refuses a gradient through it, as one more input
            return a * y * b, lambda g: g * y  # one gradient for two inputs

        return f(x, x)

    x = tl.tensor(2.0)
    message = r"grad_fn returned 1 gradients for 2 tensor inputs \(shape \(\) float32, shape \(\) float32\);"
    for run in (tl.grad(loss), tl.grad(tl.grad(loss)), tl.function(tl.grad(tl.grad(loss)))):
        with pytest.raises(ValueError, match=message):
            run(x)


def test_a_traced_narrowing_variable_assign_is_checked_when_it_runs_as_eagerly():
    v = tl.Variable(np.zeros(2, np.int32), name="counts")

    @tl.function
    def store(x):
        tl.cond(tl.sum(x) > 0, lambda: v.assign(x), lambda: v.assign(-x))
        return v + 0

    fits = np.array([5, 2**31 - 1], np.int64)
    assert store(tl.tensor(fits)).numpy().tolist() == fits.tolist()  # refused at trace before, eager assigns it
    with pytest.raises(OverflowError, match=r"Variable.assign: .* 'counts' int32 holds 1099511627776, which does"):
        store(tl.tensor(np.array([2**40, 1], np.int64)))
    assert v.numpy().tolist() == fits.tolist()  # untouched, as eagerly


def _scoped_step(x):
    with tl.GradientTape() as tape:
        tape.watch(x)
        with tl.profiler.annotate("layer1"):
            y = tl.sin(x) * 2.0
        z = tl.sum(y)
    with tl.profiler.annotate("grads"):
        return tape.gradient(z, x)


def test_gradient_ops_take_their_forward_ops_annotate_blocks():
    # TF names a gradient op gradients/<its forward op's scope>: here the blocks the gradient is taken in, then
    # the forward op's blocks.  Reference: the forward ops' own scopes; d/dx sum(2 sin x) = 2 cos x (NumPy).
    x = tl.tensor(np.array([0.1, 0.7, 2.0]))
    f = tl.function(_scoped_step)
    for fn in (_scoped_step, f, f):  # eager, then the traced function interpreted and compiled
        with tl.profile() as prof:
            g = fn(x)
        np.testing.assert_allclose(g.numpy(), 2 * np.cos(x.numpy()))
        events = [(e.op_type, e.scope) for e in prof.events]
        assert events[:2] == [("Sin", "layer1"), ("Mul", "layer1")]
        assert ("Cos", "grads/layer1") in events and ("Sum", "") not in events[3:]
        assert {s for op, s in events[3:] if op == "Mul"} == {"grads/layer1"}
    graph = f.get_graph(x)
    cos = [n for n in graph.nodes if n.op_type == "Cos"]
    assert [(n.phase, n.scope) for n in cos] == [("gradient", ("grads", "layer1"))]
    assert "Cos(%0) : float64[3]  # scope grads/layer1" in str(graph)


def test_gradient_taken_in_the_forward_block_nests_once_and_an_error_leaves_no_scope():
    from tensorlib.tensor import scopes

    x = tl.tensor(np.array([0.5, 1.5]))
    with tl.profile() as prof:
        with tl.profiler.annotate("step"):
            with tl.GradientTape() as tape:
                tape.watch(x)
                with tl.profiler.annotate("layer"):
                    y = tl.sin(x)
                z = tl.sum(y)
            np.testing.assert_allclose(tape.gradient(z, x).numpy(), np.cos(x.numpy()))
    assert ("Cos", "step/layer") in [(e.op_type, e.scope) for e in prof.events]  # not step/step/layer

    @tl.custom_gradient
    def broken(x):
        def grad(dy):
            raise ValueError("rule failed")

        return x * 1.0, grad

    with tl.GradientTape() as tape:
        tape.watch(x)
        with tl.profiler.annotate("block"):
            y = broken(x)
    with pytest.raises(ValueError, match="rule failed"):
        tape.gradient(y, x)
    assert scopes.get() == ()

"""tl.function: signatures and retracing, captures, variables, outputs, errors."""

import collections
import warnings

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.graph import CONSTANT_BYTES, RetracingWarning
from tensorlib.testing import no_retrace


def _counting(fn):
    calls = []

    def wrapped(*args, **kwargs):
        calls.append(1)
        return fn(*args, **kwargs)

    f = tl.function(wrapped)
    return f, calls


# ---------------------------------------------------------------- signatures and retracing
def test_traces_once_per_signature():
    f, calls = _counting(lambda x, scale: x * scale)
    x = np.arange(3.0)
    for _ in range(3):
        np.testing.assert_allclose(f(tl.tensor(x), 2.0).numpy(), x * 2.0)
    assert f.trace_count == 1 and len(calls) == 1
    f(x + 1.0, 2.0)  # a NumPy array of the same shape and dtype shares the graph
    assert f.trace_count == 1
    np.testing.assert_allclose(f(x, 3.0).numpy(), x * 3.0)  # a Python float is a weak input: no retrace
    assert f.trace_count == 1
    np.testing.assert_allclose(f(x, 3).numpy(), x * 3)  # a Python int is part of the signature
    f(np.arange(4.0), 3)
    f(x.astype(np.float32), 3)
    assert f.trace_count == 4
    assert f.cache_info() == {"traces": 4, "hits": 4, "cached_graphs": 4, "retrace_reasons": f.retrace_reasons}


@pytest.mark.filterwarnings("ignore::tensorlib.graph.tracing.RetracingWarning")
def test_retrace_reasons_name_the_changed_argument():
    f = tl.function(lambda x, y, mode="a": x + y if mode == "a" else x - y)
    f(np.ones((32, 3)), np.ones(3))
    f(np.ones((17, 3)), np.ones(3))
    f(np.ones((17, 3)), np.ones(3, np.float32))
    f(np.ones((17, 3)), np.ones(3, np.float32), mode="b")
    f(np.ones((17, 3)), np.ones(3, np.float32), mode="a")
    f(np.ones((17, 3)), np.ones((1, 3), np.float32), mode="a")
    assert f.retrace_reasons == [
        "first call",
        "x.shape[0]: 32 -> 17",
        "y.dtype: float64 -> float32",
        "mode: new argument ('b')",
        "mode: 'b' -> 'a'",
        "y.shape: (3,) -> (1, 3)",
    ]
    g = tl.function(lambda pair: pair[0] * pair[1])
    g((np.ones(2), np.ones(2)))
    g((np.ones(2), np.ones(1)))
    g([np.ones(2), np.ones(1)])
    assert g.retrace_reasons[1:] == ["pair[1].shape[0]: 2 -> 1", "pair: (*, *) -> [*, *]"]


def test_warns_after_a_few_traces_with_the_reason():
    f = tl.function(lambda x: x + 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for n in range(1, 6):
            f(np.ones(n))
    with pytest.warns(RetracingWarning, match=r"traced 6 times.*x\.shape\[0\]: 5 -> 6"):
        f(np.ones(6))


def test_max_traces_raises_naming_the_reason():
    f = tl.function(lambda x, k: x * k, max_traces=2)
    f(np.ones(2), 1)
    f(np.ones(2), 2)
    with pytest.raises(RuntimeError, match=r"max_traces=2.*k: 2 -> 3"):
        f(np.ones(2), 3)
    assert f.trace_count == 2
    np.testing.assert_allclose(f(np.ones(2), 2).numpy(), [2.0, 2.0])


def test_no_retrace_allows_cached_calls_and_the_first_trace_only():
    f = tl.function(lambda x: x * 2.0)
    with no_retrace(f):
        f(np.ones(3))  # the first trace is not a retrace
        f(np.zeros(3))
        with pytest.raises(AssertionError, match=r"no_retrace.*retraced.*x\.shape\[0\]: 3 -> 4"):
            f(np.ones(4))
    f(np.ones(4))  # outside the block retracing is allowed again
    with pytest.raises(TypeError, match="expected tl.function"):
        with no_retrace(lambda x: x):
            pass


def test_input_signature_with_none_gives_one_graph_for_all_batch_sizes():
    f = tl.function(lambda x: tl.sum(x * x, axis=1) / tl.mean(x), input_signature=[tl.TensorSpec((None, 3), "float64")])
    for n in (1, 4, 9):
        x = np.random.default_rng(n).random((n, 3))
        np.testing.assert_allclose(f(x).numpy(), (x * x).sum(1) / x.mean(), rtol=1e-12)
    assert f.trace_count == 1
    assert f.get_graph().inputs[0].shape == (None, 3)
    with pytest.raises(ValueError, match=r"x has shape \(2, 4\).*input_signature\[0\]"):
        f(np.ones((2, 4)))
    with pytest.raises(ValueError, match=r"x has shape.*dtype float32"):
        f(np.ones((2, 3), np.float32))
    with pytest.raises(TypeError, match="input_signature has 1"):
        f(np.ones((2, 3)), np.ones(3))
    with pytest.raises(TypeError, match="must be a tl.TensorSpec"):
        tl.function(lambda x: x, input_signature=[(None, 3)])


def test_rebinding_a_captured_global_retraces():
    global _SCALE
    _SCALE = tl.tensor([2.0, 3.0])
    f = tl.function(_scaled)
    np.testing.assert_allclose(f(np.ones(2, np.float32)).numpy(), [2.0, 3.0])
    _SCALE = tl.tensor([5.0, 7.0])
    np.testing.assert_allclose(f(np.ones(2, np.float32)).numpy(), [5.0, 7.0])
    assert f.retrace_reasons[-1] == "captured global '_SCALE' now refers to a different object"


_SCALE = None


def _scaled(x):
    return x * _SCALE


def test_rebinding_a_global_read_in_a_branch_or_loop_body_retraces():
    # The lambdas are the function's own code: their globals were not guarded, so the old array was read on.
    global _SCALE
    f = tl.function(lambda x: tl.cond(tl.sum(x) > 0, lambda: x * _SCALE, lambda: x))
    g = tl.function(lambda x: tl.scan(lambda c, _: (c + _SCALE, c), x, None, length=2)[0])
    _SCALE = np.array([2.0, 3.0])
    assert f(np.ones(2)).numpy().tolist() == [2.0, 3.0] and g(np.zeros(2)).numpy().tolist() == [4.0, 6.0]
    _SCALE = np.array([5.0, 7.0])
    assert f(np.ones(2)).numpy().tolist() == [5.0, 7.0] and g(np.zeros(2)).numpy().tolist() == [10.0, 14.0]
    assert f.retrace_reasons[-1] == g.retrace_reasons[-1] == "captured global '_SCALE' now refers to a different object"


# ---------------------------------------------------------------- captures
def test_a_big_closed_over_array_is_captured_by_reference_not_embedded():
    data = np.ones((256, 256))  # 512 KiB
    f = tl.function(lambda x: tl.sum(x * data))
    assert float(f(np.float64(2.0))) == 2.0 * 256 * 256
    graph = f.get_graph(np.float64(2.0))
    (capture,) = graph.captures
    assert (capture.name, capture.shape, capture.dtype, capture.nbytes, capture.kind) == (
        "data",
        (256, 256),
        np.float64,
        256 * 256 * 8,
        "array",
    )
    assert capture.site.endswith(f"test_graph_tracing.py:{_line_of('tl.sum(x * data)')}")
    assert all(raw.nbytes <= CONSTANT_BYTES for _, raw in graph.constants.values())
    assert "data" in str(graph) and "512.0 KiB" in str(graph)
    data[:] = 3.0  # by reference: the next run sees the new values
    assert float(f(np.float64(2.0))) == 6.0 * 256 * 256
    assert f.trace_count == 1


def _line_of(text):
    with open(__file__) as fh:
        return next(i for i, line in enumerate(fh, 1) if text in line and "_line_of" not in line)


def test_scalar_literals_are_constants_and_arrays_of_any_size_are_captures():
    small = np.array([1.0, 2.0])
    w = tl.tensor(np.ones((64, 64)))
    f = tl.function(lambda x: (x + small) @ w[:2, :] + tl.sum(w) + 0.5)
    out = f(np.ones((3, 2)))
    np.testing.assert_allclose(out.numpy(), (np.ones((3, 2)) + small) @ np.ones((2, 64)) + 64 * 64 + 0.5)
    graph = f.get_graph(np.ones((3, 2)))
    assert [c.name for c in graph.captures] == ["small", "w"]
    assert sorted(
        np.asarray(raw).tolist() if raw.ndim else raw.item() for _, raw in graph.constants.values() if raw.ndim == 0
    ) == [0.5]


def test_variables_are_read_at_every_run_and_assign_updates_them():
    v = tl.Variable([1.0, 2.0], name="v")

    @tl.function
    def bump(delta):
        before = v * 1.0
        v.assign_add(delta)
        after = v * 1.0  # reads after the assignment see the new value
        return before, after

    b, a = bump(tl.tensor([10.0, 10.0]))
    assert b.numpy().tolist() == [1.0, 2.0] and a.numpy().tolist() == [11.0, 12.0]
    assert v.numpy().tolist() == [11.0, 12.0]
    v.assign([0.0, 0.0])
    b, a = bump(tl.tensor([1.0, 1.0]))
    assert b.numpy().tolist() == [0.0, 0.0] and v.numpy().tolist() == [1.0, 1.0]
    assert bump.trace_count == 1
    graph = bump.get_graph(tl.tensor([1.0, 1.0]))
    assert [(c.name, c.kind) for c in graph.captures] == [("v", "variable")]
    assert [n.op_type for n in graph.nodes].count("AssignVariable") == 1


def test_variable_arguments_are_keyed_by_identity():
    f = tl.function(lambda var, x: var.assign(var * x))
    a, b = tl.Variable([2.0]), tl.Variable([3.0])
    f(a, tl.tensor([5.0]))
    f(b, tl.tensor([5.0]))
    assert (a.numpy().tolist(), b.numpy().tolist(), f.trace_count) == ([10.0], [15.0], 2)
    f(a, tl.tensor([2.0]))
    assert a.numpy().tolist() == [20.0] and f.trace_count == 2


def test_assign_rules_match_eager():
    v = tl.Variable([1.0, 2.0], name="v")
    with pytest.raises(ValueError, match=r"Variable.assign: value of shape \(3,\)"):
        tl.function(lambda: v.assign([1.0, 2.0, 3.0]))()

    @tl.function
    def assign_while_recording(x):
        with tl.GradientTape():
            y = v * x
            v.assign(y)
        return y

    with pytest.raises(RuntimeError, match="read by a GradientTape that is still recording"):
        assign_while_recording(tl.tensor([1.0, 1.0]))


# ---------------------------------------------------------------- outputs, nesting, methods
def test_outputs_keep_their_nesting_and_python_constants():
    Pair = collections.namedtuple("Pair", "a b")
    f = tl.function(lambda x: {"sum": tl.sum(x), "parts": [x * 2.0, (x + 1.0, 7)], "pair": Pair(x, None), "name": "ok"})
    out = f(np.array([1.0, 2.0]))
    assert float(out["sum"]) == 3.0 and out["parts"][0].numpy().tolist() == [2.0, 4.0]
    assert out["parts"][1][0].numpy().tolist() == [2.0, 3.0] and out["parts"][1][1] == 7
    assert isinstance(out["pair"], Pair) and out["pair"].b is None and out["name"] == "ok"
    with pytest.raises(TypeError, match="returned a object"):
        tl.function(lambda x: object())(np.ones(1))


def test_a_function_called_while_tracing_is_inlined():
    inner = tl.function(lambda x: tl.exp(x) * 2.0)
    outer = tl.function(lambda x: inner(x) + inner(x + 1.0))
    x = np.array([0.5, -0.5])
    np.testing.assert_allclose(outer(x).numpy(), 2 * np.exp(x) + 2 * np.exp(x + 1.0))
    assert inner.trace_count == 0
    assert [n.op_type for n in outer.get_graph(x).nodes].count("Exp") == 2


def test_methods_are_traced_per_instance():
    class Model:
        def __init__(self, scale):
            self.w = tl.Variable([scale])

        @tl.function
        def __call__(self, x):
            return x * self.w

    m1, m2 = Model(2.0), Model(3.0)
    assert m1(tl.tensor([1.0])).numpy().tolist() == [2.0]
    assert m2(tl.tensor([1.0])).numpy().tolist() == [3.0]
    assert Model.__call__.trace_count == 2


def test_get_graph_accepts_specs_and_values():
    f = tl.function(lambda x, n: tl.sum(x) * n)
    graph = f.get_graph(tl.TensorSpec((None, 2), "float32"), 3)
    assert graph.inputs[0].shape == (None, 2) and graph.input_names == ["x"]
    assert float(graph(np.ones((5, 2), np.float32))) == 30.0
    assert f.get_graph(tl.TensorSpec((None, 2), "float32"), 3) is graph


# ---------------------------------------------------------------- errors while tracing
def test_python_control_flow_on_a_symbolic_tensor_says_why():
    f = tl.function(lambda x: x if x > 0 else -x)
    with pytest.raises(TypeError, match="symbolic tensor.*has no value while tl.function traces"):
        f(tl.tensor(1.0))


def test_a_leaked_symbolic_tensor_is_refused_with_a_clear_error():
    leaked = []
    tl.function(lambda x: leaked.append(x * 2.0) or x)(np.ones(2))
    with pytest.raises(ValueError, match="symbolic tensor .* was used outside of it"):
        leaked[0] + 1.0
    with pytest.raises(ValueError, match="from another tl.function trace was used while tracing"):
        tl.function(lambda y: y + leaked[0])(np.ones(2))


def test_an_op_error_while_tracing_names_the_op_and_shapes():
    f = tl.function(lambda x, y: x @ y)
    with pytest.raises(ValueError, match=r"BatchMatMulV2: inner dimensions do not match"):
        f(np.ones((2, 3)), np.ones((4, 2)))


def test_assigning_an_argument_copies_it_as_eager_assign_does():
    v = tl.Variable(np.zeros(3))
    f = tl.function(lambda x: v.assign(x))
    for _ in range(2):  # interpreted, then compiled
        x = np.array([1.0, 2.0, 3.0])
        f(x)
        x[:] = -1.0
        assert v.numpy().tolist() == [1.0, 2.0, 3.0]


def test_random_draws_inside_a_traced_function_are_new_on_every_run():
    f = tl.function(lambda x: x + tl.random.normal((3,), dtype="float64"))
    a, b = f(np.zeros(3)).numpy(), f(np.zeros(3)).numpy()
    assert not np.array_equal(a, b)  # not baked into the graph at trace time
    seeded = tl.function(lambda x: x + tl.random.normal((3,), dtype="float64", seed=7))
    np.testing.assert_array_equal(seeded(np.zeros(3)).numpy(), seeded(np.zeros(3)).numpy())
    np.testing.assert_array_equal(seeded(np.zeros(3)).numpy(), tl.random.normal((3,), dtype="float64", seed=7).numpy())
    assert [n.op_type for n in f.get_graph(np.zeros(3)).optimize().nodes] == ["RandomStandardNormal", "Add"]


def test_state_read_under_two_names_of_one_owner_keys_each_graph_once():
    # A traced training step reads model.training (BatchNorm) and .trainable of the same Modules: the second
    # name of an owner was noted again at every retrace, so the graphs traced before never matched again.
    # Batch sizes 4, 4, 3 for three epochs traced 6 times (and the state list grew to 11 entries); 2 are due.
    model = tl.nn.Sequential(tl.nn.Dense(2, 3, seed=0), tl.nn.BatchNorm(3), tl.nn.Dense(3, 1, seed=1))
    opt = tl.optimizers.SGD(0.01)

    @tl.function
    def step(x):
        with tl.GradientTape() as tape:
            loss = tl.sum(tl.square(model(x)))
        opt.apply(tape.gradient(loss, model.trainable_variables), model)

    for n in [4, 4, 3] * 3:
        step(tl.ones((n, 2), dtype="float32"))
    assert step.trace_count == 2
    labels = [label for _, _, label in step._state]
    assert len(labels) == len(set(labels)) and not any("#" in label for label in labels if "BatchNorm" in label)

"""tl.function signatures and cache: parameter names, overrides, NaN, weak floats, static arguments, bounds."""

import gc
import os
import warnings
import weakref

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.graph import RetracingWarning


def test_retrace_reasons_name_parameters():
    @tl.function
    def f(batch_input, *rest, scale=1):
        return batch_input * scale

    f(np.ones((5, 2)))
    f(np.ones((6, 2)))
    f(np.ones((6, 2)), np.ones(3))
    f(np.ones((6, 2)), np.ones(4))
    f(np.ones((6, 2)), np.ones(4), scale=3)
    assert f.retrace_reasons == [
        "first call",
        "batch_input.shape[0]: 5 -> 6",
        "rest[0]: new argument (tensor float64[3])",
        "rest[0].shape[0]: 3 -> 4",
        "scale: new argument (3)",
    ]
    assert f.get_graph(np.ones((6, 2)), np.ones(4)).input_names == ["batch_input", "rest[0]"]


def test_methods_name_self():
    class Model:
        @tl.function
        def __call__(self, x, k):
            return x * k

    m = Model()
    m(np.ones(2), 1)
    m(np.ones(2), 2)
    assert Model.__call__.retrace_reasons[-1] == "k: 1 -> 2"


def test_an_active_gradient_override_is_part_of_the_signature():
    def grad_of_relu(x):
        with tl.GradientTape() as tape:
            tape.watch(x)
            y = tl.sum(tl.nn.relu(x))
        return tape.gradient(y, x)

    f = tl.function(grad_of_relu)
    x = tl.tensor([-1.0, 2.0])
    assert f(x).numpy().tolist() == [0.0, 1.0]  # traced before the override...
    with tl.grad.override({"Relu": lambda node, g: g * 5.0}):
        assert f(x).numpy().tolist() == [5.0, 5.0]  # ...does not ignore it
    assert f(x).numpy().tolist() == [0.0, 1.0]  # and one traced under it does not keep it
    assert f.trace_count == 2
    assert "tl.grad.override: none active -> Relu overridden" in f.retrace_reasons[1]


def test_a_nan_static_argument_does_not_retrace_on_every_call():
    f = tl.function(lambda x, fill: tl.where(x > 0, x, fill), static_argnums=1)
    for _ in range(3):
        out = f(np.array([-1.0, 1.0]), float("nan"))
    assert np.isnan(out.numpy()[0]) and f.trace_count == 1
    f(np.array([-1.0, 1.0]), -0.0)
    f(np.array([-1.0, 1.0]), 0.0)
    assert f.trace_count == 3  # 0.0 and -0.0 are different values


def test_fresh_objects_passed_as_arguments_are_not_kept_alive():
    class Config:
        def __init__(self):
            self.table = np.ones(1 << 14)  # 128 KiB: captured by reference

    f = tl.function(lambda x, config: x + config.table[:2] * 0.0)
    refs = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RetracingWarning)
        for _ in range(50):
            config = Config()
            refs.append(weakref.ref(config.table))
            np.testing.assert_allclose(f(np.ones(2), config).numpy(), [1.0, 1.0])
    del config
    gc.collect()
    assert sum(r() is not None for r in refs) == 0
    assert f.cache_info()["cached_graphs"] == 0


class _Weakly(np.ndarray):
    """An ndarray that takes weak references."""


def test_a_dropped_function_frees_its_graphs_and_captures():
    # The executor kept each graph it had run (its optimized form, plan and captures) in weak-keyed
    # tables whose values held the key: nothing a traced function ever ran was freed.
    refs = []
    cases = [(lambda a: lambda x: x * tl.sum(a), 1 << 14), (lambda a: lambda x: x, 1.0)]  # the second: no pass applies
    for make, expected in cases:
        table = np.ones(1 << 14).view(_Weakly)
        f = tl.function(make(table))
        np.testing.assert_array_equal(f(np.ones(2)).numpy(), [expected, expected])
        graph = f.get_graph(np.ones(2))
        graph.optimize().executable()
        refs += [weakref.ref(table), weakref.ref(graph), weakref.ref(f)]
        del table, f, graph
    gc.collect()
    assert [r() for r in refs] == [None] * len(refs)


def test_variables_passed_as_arguments_are_not_kept_alive_by_the_cache():
    f = tl.function(lambda v, x: v * x)
    refs = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RetracingWarning)
        for k in range(20):
            v = tl.Variable(np.full(3, float(k)))
            refs.append(weakref.ref(v))
            np.testing.assert_array_equal(f(v, np.ones(3)).numpy(), [k, k, k])
            del v
    gc.collect()
    assert sum(r() is not None for r in refs) == 0
    assert f.cache_info()["cached_graphs"] == 0
    v = tl.Variable(np.ones(2))
    graph = f.get_graph(v, np.ones(2))
    np.testing.assert_array_equal(graph(np.full(2, 3.0)).numpy(), [3.0, 3.0])  # the graph still reads it
    del v
    gc.collect()
    with pytest.raises(TypeError, match="missing captures"):
        graph(np.ones(2))


def test_the_cache_is_bounded_and_warns_naming_the_function():
    def scaled(x, k):
        return x * k

    f = tl.function(scaled, cache_size=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RetracingWarning)
        for k in range(3):
            f(np.ones(2), k)
    with pytest.warns(RetracingWarning, match=r"'scaled': its cache of 3 graphs is full"):
        f(np.ones(2), 3)
    assert f.cache_info()["cached_graphs"] == 3
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RetracingWarning)
        f(np.ones(2), 3)  # the most recent stays
        assert f.trace_count == 4
        f(np.ones(2), 0)  # the least recent was dropped
        assert f.trace_count == 5
    with pytest.raises(ValueError, match="cache_size must be at least 1"):
        tl.function(scaled, cache_size=0)


def test_tensorspec_rejects_negative_sizes():
    with pytest.raises(ValueError, match=r"TensorSpec: shape \(-1, 3\) has a negative dimension; use None"):
        tl.TensorSpec((-1, 3))


def test_save_does_not_warn_about_retracing(tmp_path):
    f = tl.function(lambda x: x + 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RetracingWarning)
        for n in range(1, 7):
            f(np.ones(n))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        f.save(os.path.join(tmp_path, "f.json"), tl.TensorSpec((None,), "float64"))
        f.get_graph(tl.TensorSpec((7,), "float32"))


# ---------------------------------------------------------------- Python floats: weak inputs, static arguments
def test_a_changing_float_is_fed_without_retracing_and_stays_weak():
    @tl.function
    def step(w, lr):
        return w - lr * w

    w32 = np.array([1.0, 2.0], np.float32)
    for lr in (0.1, 0.01, 0.5):
        out = step(w32, lr)
        eager = tl.tensor(w32) - lr * tl.tensor(w32)
        assert out.dtype == eager.dtype == np.float32
        np.testing.assert_array_equal(out.numpy(), eager.numpy())
    w64 = np.array([1.0, 2.0])
    np.testing.assert_array_equal(step(w64, 0.1).numpy(), w64 - 0.1 * w64)  # exact in float64
    assert step.trace_count == 2 and step.retrace_reasons[1] == "w.dtype: float32 -> float64"
    ints = tl.function(lambda n, s: n * s)(np.array([1, 2]), 0.5)
    assert ints.dtype == (tl.tensor([1, 2]) * 0.5).dtype


def test_static_argnums_and_argnames_retrace_on_value():
    f = tl.function(lambda x, p: x**p, static_argnums=(1,))
    g = tl.function(lambda x, p: x**p, static_argnames=("p",))
    for h in (f, g):
        assert [float(h(tl.tensor(2.0), p)) for p in (2.0, 3.0, 2.0)] == [4.0, 8.0, 4.0]
        assert h.trace_count == 2 and h.retrace_reasons[1] == "p: 2.0 -> 3.0"
        assert float(h(tl.tensor(2.0), p=3.0)) == 8.0  # by name as well
    with pytest.raises(ValueError, match=r"static_argnames entry 'q' is not a parameter \(parameters: x, p\)"):
        tl.function(lambda x, p: x, static_argnames="q")
    with pytest.raises(ValueError, match="static_argnums entry -5 is not a parameter position"):
        tl.function(lambda x, p: x, static_argnums=-5)


def test_static_argnames_take_keyword_only_parameters():
    @tl.function(static_argnames="scale")
    def f(x, *, scale=1.0):
        return x * scale

    x = np.array([1.0, 2.0])
    assert [f(x, scale=s).numpy().tolist() for s in (2.0, 3.0, 2.0)] == [[2.0, 4.0], [3.0, 6.0], [2.0, 4.0]]
    assert f.trace_count == 2 and f.retrace_reasons[1] == "scale: 2.0 -> 3.0"
    with pytest.raises(ValueError, match=r"static_argnames entry 'sale' is not a parameter \(parameters: x, scale\)"):
        tl.function(lambda x, *, scale: x, static_argnames="sale")


def test_a_static_argnum_past_the_parameters_is_an_error():
    # Position 2 of f(x, p) is never filled: a silently ignored typo would leave p traced.
    with pytest.raises(ValueError, match=r"static_argnums entry 2 is not a parameter position .*x, p\)"):
        tl.function(lambda x, p: x, static_argnums=2)
    with pytest.raises(ValueError, match="static_argnums entry 1 is not a parameter position"):
        tl.function(lambda x, *, p: x, static_argnums=1)
    g = tl.function(lambda x, *rest: x * rest[0], static_argnums=2)  # *args positions can be static
    assert g(np.ones(1), 2.0, 3.0).numpy().tolist() == [2.0]


def test_a_float_needed_as_a_python_value_becomes_static():
    f = tl.function(lambda x, alpha: tl.nn.leaky_relu(x, alpha=alpha))
    x = np.array([-1.0, 1.0])
    assert f(x, 0.5).numpy().tolist() == [-0.5, 1.0]
    assert f(x, 0.25).numpy().tolist() == [-0.25, 1.0]
    assert f.trace_count == 2
    h = tl.function(lambda x, k: x * float(k))
    assert h(x, 3.0).numpy().tolist() == [-3.0, 3.0]


def test_python_if_on_a_traced_tensor_points_to_cond_and_where():
    def f(x):
        if tl.sum(x) > 0:
            return x
        return -x

    with pytest.raises(TypeError, match=r"Python `if`.*tl\.cond\(pred, true_fn, false_fn, operands\).*tl\.where"):
        tl.function(f)(np.ones(2))


def test_a_retrace_for_another_object_says_so():
    # A new instance can take a dead one's address, and so its repr: the reason was "new signature".
    class Model:
        def __init__(self, k):
            self.k = k

        @tl.function
        def __call__(self, x):
            return x * self.k

    for k in (1.0, 2.0, 3.0):
        assert Model(k)(np.ones(1)).numpy().tolist() == [k]
    assert Model.__call__.retrace_reasons[1:] == ["self: another Model object (objects are keyed by identity)"] * 2
    f = tl.function(lambda x, fn: fn(x))
    f(np.zeros(1), tl.exp)
    f(np.zeros(1), tl.sin)
    assert f.retrace_reasons[1] == "fn: function exp -> function sin"

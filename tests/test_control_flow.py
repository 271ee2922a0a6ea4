"""tl.cond, tl.while_loop, tl.scan: traced nodes, nesting, printing, files, gradients and their errors."""

import numpy as np
import pytest

import tensorlib as tl


def test_traced_cond_runs_only_the_chosen_branch_and_matches_eager():
    calls = []

    def branch(tag, fn):
        def run(v):
            calls.append(tag)
            return fn(v)

        return run

    f = tl.function(lambda x: tl.cond(tl.sum(x) > 0, branch("t", tl.exp), branch("f", tl.sin), x))
    for x in (np.array([1.0, 2.0]), np.array([-1.0, -2.0])):
        eager = tl.cond(tl.sum(tl.tensor(x)) > 0, tl.exp, tl.sin, tl.tensor(x))
        np.testing.assert_allclose(f(x).numpy(), eager.numpy())
    assert sorted(calls) == ["f", "t"]  # each branch traced once, never run in Python again
    assert [n.op_type for n in f.get_graph(np.ones(2)).nodes] == ["Sum", "Greater", "Cond"]


def test_subgraphs_print_nested_under_their_node():
    def f(x, n):
        c, ys = tl.scan(lambda c, v: (c + v, c * 2.0), tl.zeros_like(x[0]), x)
        return tl.while_loop(lambda s: s[0] < n, lambda s: (s[0] + 1, s[1] * 1.5), (tl.tensor(0), c))[1]

    text = str(tl.function(f).get_graph(tl.TensorSpec((3, 2), "float64"), tl.TensorSpec((), "int64")))
    assert "= Scan(" in text and "body=<graph f>" in text
    assert "\n    body: graph f(%0: float64[2] f[0], %1: float64[2] f[1]) {\n      %2 = const float64[] 2.0\n" in text
    assert "\n    cond_graph: graph cond_fn(" in text and "\n      %3 = Less(%0, %2) : bool[]\n" in text


def test_control_flow_graphs_save_and_load(tmp_path):
    w = tl.Variable(np.array([0.5, 2.0]), name="w")

    def f(x, n):
        y = tl.cond(tl.sum(x) > 0, lambda v: tl.exp(v) * w, lambda v: tl.cond(v[0] > -1.0, tl.sin, tl.cos, v), x)
        c, ys = tl.scan(lambda c, v: (c + v, c * 2.0), tl.zeros((2,), "float64"), tl.stack([y, y]))
        return tl.while_loop(lambda s: s[0] < n, lambda s: (s[0] + 1, s[1] * 1.5), (tl.tensor(0), c))[1] + tl.sum(ys)

    graph = tl.function(f).get_graph(tl.TensorSpec((2,), "float64"), tl.TensorSpec((), "int64"))
    graph.save(tmp_path / "g.json", include_captures=True)
    loaded = tl.graph.load(tmp_path / "g.json")
    assert str(loaded).count("graph ") == str(graph).count("graph ")
    for x, n in ((np.array([1.0, 2.0]), 3), (np.array([-0.5, -2.0]), 0), (np.array([-3.0, 1.0]), 1)):
        np.testing.assert_allclose(loaded(x, np.array(n)).numpy(), f(tl.tensor(x), tl.tensor(n)).numpy(), rtol=1e-12)


def test_cond_gradients_reach_closed_over_variables_in_a_traced_training_step():
    w = tl.Variable(np.array([1.0, -2.0]), name="w")

    @tl.function
    def step(x, big):
        with tl.GradientTape() as tape:
            y = tl.cond(big, lambda v: tl.sum(tl.exp(v * w)), lambda v: tl.sum(v * w * w), x)
        return tape.gradient(y, w)

    x = np.array([0.5, 0.25])
    np.testing.assert_allclose(step(x, np.array(True)).numpy(), x * np.exp(x * w.numpy()))
    np.testing.assert_allclose(step(x, np.array(False)).numpy(), 2 * x * w.numpy())
    assert step.trace_count == 1


def test_cond_second_order_through_the_node():
    f = tl.function(lambda x, p: tl.hessian(lambda v: tl.sum(tl.cond(p, lambda u: u**3, tl.sin, v)))(x))
    x = np.array([0.5, -1.0])
    np.testing.assert_allclose(f(x, np.array(True)).numpy(), np.diag(6 * x))
    np.testing.assert_allclose(f(x, np.array(False)).numpy(), np.diag(-np.sin(x)))


def test_scan_gradient_with_integer_carry_and_no_xs():
    def f(x):
        (c, n), ys = tl.scan(
            lambda carry, _: ((carry[0] * x, carry[1] + 1), carry[0]), (x, tl.tensor(0)), None, length=4
        )
        return tl.sum(c) + tl.sum(ys), n

    x = np.array([1.1, 0.9])
    value, count = tl.function(f)(x)
    assert int(count) == 4
    np.testing.assert_allclose(value.numpy(), np.sum(x**5 + x + x**2 + x**3 + x**4))
    g = tl.function(tl.grad(lambda v: f(v)[0]))(x)
    np.testing.assert_allclose(g.numpy(), 5 * x**4 + 1 + 2 * x + 3 * x**2 + 4 * x**3)
    tl.testing.check_grads(lambda v: tl.function(f)(v)[0], (x,), order=1)


def test_while_loop_reverse_mode_with_and_without_maximum_iterations():
    loop = lambda v: tl.while_loop(lambda s: tl.sum(s) < 10.0, lambda s: s * 2.0, v)  # noqa: E731
    x = tl.tensor([1.0, 2.0])
    np.testing.assert_allclose(tl.function(loop)(x).numpy(), [4.0, 8.0])
    # Unbounded: the gradient runs the loop again, keeping its steps (TensorFlow's while_v2 keeps them too).
    np.testing.assert_allclose(tl.function(tl.grad(lambda v: tl.sum(loop(v))))(x).numpy(), [4.0, 4.0])
    bounded = lambda v: tl.while_loop(lambda s: tl.sum(s) < 10.0, lambda s: s * 2.0, v, maximum_iterations=1)  # noqa
    np.testing.assert_allclose(tl.function(tl.grad(lambda v: tl.sum(bounded(v))))(x).numpy(), [2.0, 2.0])
    with pytest.raises(ValueError, match="maximum_iterations must be a non-negative int, got -1"):
        tl.while_loop(lambda s: True, lambda s: s, x, maximum_iterations=-1)


def test_errors_name_the_mismatch():
    with pytest.raises(
        TypeError,
        match=r"true_fn and false_fn must return the same structure, shapes and dtypes; "
        r"true_fn returns \[float64\[2\]\], false_fn returns \[float64\[1\]\]",
    ):
        tl.function(lambda x: tl.cond(tl.sum(x) > 0, lambda v: v, lambda v: v[:1], x))(np.ones(2))
    with pytest.raises(
        TypeError,
        match=r"body_fn must return the structure, shapes and dtypes of loop_vars: "
        r"loop_vars are \[float64\[2\]\], body_fn returns \[float32\[2\]\]",
    ):
        tl.function(lambda x: tl.while_loop(lambda s: tl.sum(s) < 3.0, lambda s: tl.cast(s, "float32"), x))(np.ones(2))
    with pytest.raises(TypeError, match=r"tl.scan: f must return a pair \(carry, y\)"):
        tl.function(lambda x: tl.scan(lambda c, u: c, x[0], x))(np.ones(2))

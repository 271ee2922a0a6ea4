"""Control flow, adversarially: random draws in traced branches and loop bodies, and what else cflow2 found; and
tl.switch and tl.fori_loop (JAX's), against NumPy, central differences and JAX where installed."""

import numpy as np
import pytest

import tensorlib as tl

from _helpers import central_differences

X = np.array([0.3, -0.2, 0.5])


def _scaled_scan(c):
    """A scan that multiplies its carry by fresh uniforms at each step and returns them."""
    draw = lambda: tl.random.uniform((3,), 0.5, 1.5, dtype="float64")  # noqa: E731
    return tl.scan(lambda c, _: (c * (r := draw()), r), c, None, length=4)


def _taped(fn):
    """The value of ``fn(x)`` (its first output summed) and its gradient, taken by a tape in a traced step."""

    @tl.function
    def step(x):
        with tl.GradientTape() as tape:
            tape.watch(x)
            out = fn(x)
            loss = tl.sum(out[0])
        return out, tape.gradient(loss, x)

    return step


@pytest.mark.parametrize("where", ["inside", "outside"])
def test_a_gradient_through_a_traced_scan_uses_the_numbers_its_body_drew(where):
    # The gradient replays the body: it drew new numbers and gave the gradient of another draw
    # (here prod(r) is the gradient; it came out as the product of different uniforms).
    if where == "inside":
        (c, rs), g = _taped(_scaled_scan)(X)
    else:
        x = tl.tensor(X)
        with tl.GradientTape() as tape:
            tape.watch(x)
            c, rs = tl.function(_scaled_scan)(x)
            loss = tl.sum(c)
        g = tape.gradient(loss, x)
    rs = rs.numpy()
    np.testing.assert_allclose(c.numpy(), X * rs.prod(0), rtol=1e-13)
    np.testing.assert_allclose(g.numpy(), rs.prod(0), rtol=1e-13)
    assert len(np.unique(rs[:, 0])) == 4  # fresh numbers at every step


def test_a_dropout_in_a_traced_scan_body_differentiates_with_its_mask():
    def fn(xs):
        return tl.scan(lambda c, x: (c + tl.sum((h := tl.nn.dropout(x, 0.5)) * x), h), tl.tensor(0.0, "float64"), xs)

    xs = np.arange(1.0, 33.0).reshape(4, 8)
    (total, hs), g = _taped(fn)(xs)
    mask = hs.numpy() / xs  # 0 or 2
    np.testing.assert_allclose(g.numpy(), 2 * xs * mask)
    np.testing.assert_allclose(total.numpy(), np.sum(xs * xs * mask))


def test_a_gradient_through_a_traced_cond_uses_the_numbers_its_branch_drew():
    def fn(x, flag):
        def noisy(v):
            r = tl.random.normal((3,), dtype="float64")
            return v * r, r

        return tl.cond(flag, noisy, lambda v: (v, tl.zeros_like(v)), x)

    for flag in (True, False):
        (y, r), g = _taped(lambda x, flag=flag: fn(x, tl.tensor(flag)))(X)
        np.testing.assert_allclose(g.numpy(), r.numpy() if flag else np.ones(3))
        np.testing.assert_allclose(y.numpy(), X * r.numpy() if flag else X)


def test_a_bounded_while_node_and_nested_loops_differentiate_with_their_draws():
    def loop(c):
        body = lambda s: (s[0] * tl.random.uniform((3,), 0.5, 1.5, dtype="float64"), s[1] + 1)  # noqa: E731
        return tl.while_loop(lambda s: s[1] < 3, body, (c, tl.tensor(0)), maximum_iterations=5)

    x = tl.tensor(X)
    with tl.GradientTape() as tape:  # the While node's gradient runs the loop again
        tape.watch(x)
        out, steps = tl.function(loop)(x)
        loss = tl.sum(out)
    assert int(steps) == 3
    np.testing.assert_allclose(tape.gradient(loss, x).numpy(), out.numpy() / X, rtol=1e-13)

    (out, _), g = _taped(loop)(X)  # a scan of conds where the tape records
    np.testing.assert_allclose(g.numpy(), out.numpy() / X, rtol=1e-13)

    (_, rs), g = _taped(lambda x: tl.scan(lambda c, _: _scaled_scan(c), x, None, length=2))(X)
    rs = rs.numpy()
    np.testing.assert_allclose(g.numpy(), rs.reshape(8, 3).prod(0), rtol=1e-13)
    assert len(np.unique(rs[..., 0])) == 8


def test_a_saved_loop_that_draws_loads_and_draws_per_step(tmp_path):
    graph = tl.function(_scaled_scan).get_graph(tl.TensorSpec((3,), "float64"))
    graph.save(tmp_path / "g.json")
    c, rs = tl.graph.load(tmp_path / "g.json")(X)
    np.testing.assert_allclose(c.numpy(), X * rs.numpy().prod(0), rtol=1e-13)
    assert len(np.unique(rs.numpy()[:, 0])) == 4


@pytest.mark.parametrize("traced", [False, True])
def test_a_mismatch_error_names_the_first_leaf_that_differs(traced):
    def run(fn):
        with pytest.raises(TypeError) as info:
            (tl.function(fn) if traced else fn)(np.ones(2))
        return str(info.value)

    branches = lambda x: tl.cond(  # noqa: E731
        tl.sum(x) > 0, lambda v: {"a": v, "b": [v, v]}, lambda v: {"a": v, "b": [v, tl.cast(v, "float32")]}, x
    )
    if traced:  # eagerly only the taken branch runs
        assert run(branches).endswith("(first difference at ['b'][1]: float64[2] vs float32[2])")
    carry = lambda x: tl.scan(lambda c, _: ({"p": c["p"], "q": c["q"][:1]}, None), {"p": x, "q": x}, None, length=2)  # noqa: E731
    assert run(carry).endswith("(first difference at ['q']: float64[2] vs float64[1])")
    loop = lambda x: tl.while_loop(lambda s: tl.sum(s[0]) < 3.0, lambda s: (s[0] + 1.0, s[1] * 1j), (x, x))  # noqa: E731
    assert run(loop).endswith("(first difference at [1]: float64[2] vs complex128[2])")


def test_a_traced_jvp_through_an_unbounded_while_loop_carries_the_tangent():
    loop = lambda v: tl.while_loop(lambda s: tl.sum(s) < 10.0, lambda s: s * 2.0, v)  # noqa: E731
    out, tangent = tl.function(lambda x: tl.jvp(loop, (x,), (tl.ones_like(x),)))(np.array([1.0, 2.0]))
    np.testing.assert_allclose(out.numpy(), [4.0, 8.0])
    np.testing.assert_allclose(tangent.numpy(), [4.0, 4.0])  # two doublings; the trip count is locally constant


W = np.array([0.7, -0.4, 1.1])


def _tanh_grad_w(x, w):
    return (1 - np.tanh(x * w) ** 2) * x


def test_a_tape_in_a_traced_body_reaches_an_outer_tensor_through_a_nested_node():
    # The Cond node in the body took the body's placeholder for w, which the tape (watching w) does not know:
    # the gradient was None traced (the eager loop's is right).
    def fn(x, w):
        def body(c, _):
            with tl.GradientTape() as tape:
                tape.watch(w)
                y = tl.sum(tl.cond(tl.sum(c) > -9.0, lambda u: tl.tanh(u * w), lambda u: u, c))
            return c, tape.gradient(y, w)

        return tl.scan(body, x, None, length=1)[1][0]

    np.testing.assert_allclose(fn(tl.tensor(X), tl.tensor(W)).numpy(), _tanh_grad_w(X, W))
    np.testing.assert_allclose(tl.function(fn)(X, W).numpy(), _tanh_grad_w(X, W))


def test_a_bounded_while_loop_in_a_traced_scan_body_differentiates_to_what_it_closes_over():
    # The While node's gradient (a scan of conds, traced in the reverse scan's body) gave zeros for w.
    def fn(x, w):
        step = lambda s: (tl.tanh(s[0] * w), s[1] + 1)  # noqa: E731
        body = lambda c, _: (tl.while_loop(lambda s: s[1] < 1, step, (c, tl.tensor(0)), maximum_iterations=1)[0], None)  # noqa: E731
        return tl.sum(tl.scan(body, x, None, length=1)[0])

    np.testing.assert_allclose(tl.grad(fn, argnums=1)(tl.tensor(X), tl.tensor(W)).numpy(), _tanh_grad_w(X, W))
    np.testing.assert_allclose(tl.function(tl.grad(fn, argnums=1))(X, W).numpy(), _tanh_grad_w(X, W))


# ------------------------------------------------------------------ switch and fori_loop (session 9)
_BRANCHES = [lambda v, w: v * w, lambda v, w: tl.sin(v) + w, lambda v, w: v**3 - w]
_NP_BRANCHES = [lambda v, w: v * w, lambda v, w: np.sin(v) + w, lambda v, w: v**3 - w]


@pytest.mark.parametrize("index", [-2, 0, 1, 2, 7])
def test_switch_clamps_the_index_and_differentiates_the_branch_taken(index):
    v, w = np.array([0.3, -1.2]), np.array([2.0, 0.5])
    k = min(max(index, 0), 2)
    np.testing.assert_allclose(tl.switch(index, _BRANCHES, v, w).numpy(), _NP_BRANCHES[k](v, w), rtol=1e-12)

    def loss(v, w, i):
        return tl.sum(tl.switch(i, _BRANCHES, v, w) ** 2)

    numeric = central_differences(lambda a: np.sum(_NP_BRANCHES[k](a, w) ** 2), v)
    np.testing.assert_allclose(tl.grad(loss)(tl.tensor(v), tl.tensor(w), index).numpy(), numeric, rtol=1e-7)
    traced = tl.function(
        tl.grad(loss), input_signature=[tl.TensorSpec((2,), "float64")] * 2 + [tl.TensorSpec((), "int64")]
    )
    np.testing.assert_allclose(traced(v, w, np.int64(index)).numpy(), numeric, rtol=1e-7)


def test_switch_under_vmap_selects_per_element_and_refuses_bad_input():
    vs = np.array([[0.5, 1.0], [2.0, -1.0], [0.1, 0.2]])
    got = tl.vmap(lambda i, v: tl.switch(i, _BRANCHES, v, 2.0))(np.array([0, 1, 2]), vs).numpy()
    np.testing.assert_allclose(got, [_NP_BRANCHES[k](v, 2.0) for k, v in enumerate(vs)], rtol=1e-12)
    with pytest.raises(ValueError, match="tl.switch: branches must hold at least one function"):
        tl.switch(0, [], 1.0)
    with pytest.raises(TypeError, match=r"tl.switch: branches\[1\] must be callable"):
        tl.switch(0, [tl.sin, 3], 1.0)
    with pytest.raises(TypeError, match="tl.switch: the index must be an integer scalar, got float"):
        tl.switch(0.5, _BRANCHES, 1.0, 1.0)


def test_fori_loop_static_bounds_scan_and_differentiate_dynamic_bounds_loop():
    x = np.array([0.5, -0.25])

    def power(x, n):  # x ** (2 ** n) by repeated squaring
        return tl.fori_loop(0, n, lambda i, v: v * v, x)

    np.testing.assert_allclose(power(tl.tensor(x), 3).numpy(), x**8, rtol=1e-12)
    np.testing.assert_allclose(tl.grad(lambda t: tl.sum(power(t, 3)))(tl.tensor(x)).numpy(), 8 * x**7, rtol=1e-12)
    traced = tl.function(tl.grad(lambda t: tl.sum(power(t, 3))))
    np.testing.assert_allclose(traced(x).numpy(), 8 * x**7, rtol=1e-12)
    assert tl.fori_loop(3, 3, lambda i, v: v + 1, 7) == 7  # an empty range returns init_val untouched
    counted = tl.function(lambda n: tl.fori_loop(tl.tensor(0), n, lambda i, s: s + i, tl.tensor(0)))
    assert int(counted(np.int64(5))) == 10 and int(counted(np.int64(0))) == 0
    with pytest.raises(TypeError, match="tl.fori_loop: lower and upper must be integers, got float32"):
        tl.fori_loop(tl.tensor(0.0), 3.5, lambda i, v: v, 0)


def test_fori_loop_matches_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    x = np.array([0.3, 0.7])

    def body(i, v):
        return v * 0.9 + 0.1 * i

    got = tl.grad(lambda t: tl.sum(tl.fori_loop(1, 6, lambda i, v: v * 0.9 + 0.1 * tl.cast(i, "float64"), t) ** 2))(x)
    want = jax.grad(lambda t: jax.numpy.sum(jax.lax.fori_loop(1, 6, body, t) ** 2))(x)
    np.testing.assert_allclose(got.numpy(), np.asarray(want), rtol=1e-12)

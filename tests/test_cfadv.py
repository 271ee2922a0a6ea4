"""Control flow and graph files, adversarially (round 3): JAX's forms of ``tl.fori_loop`` and ``tl.scan`` (bounds,
the loop index's type, ``unroll=``, empty ranges), and every catalogue op through ``save -> load -> run`` (its
nodes, attributes and constants compared with the graph saved, and its results bit for bit).

References: NumPy loops, float64 central differences, the graph before saving (bit for bit), and JAX
(``jax.lax.fori_loop``/``scan``) where installed.
"""

import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorlib as tl
from tensorlib.graph.ir import Graph
from tensorlib.graph.passes import canonical
from tensorlib.testing.op_db import all_opinfos

from _helpers import MODES, central_differences


def _in_mode(mode, f):
    return f if mode == "eager" else tl.function(f)


# ------------------------------------------------------------------ fori_loop: JAX's forms
@pytest.mark.parametrize("mode", MODES)
def test_an_empty_fori_loop_never_returns_the_callers_array_or_variable(mode):
    # fori_loop(3, 1, f, a) returned `a` itself: writing to the NumPy array (or assigning the Variable) later
    # changed the "result", which DESIGN §6 forbids (values are immutable); the traced form returned a copy.
    a = np.array([1.0, 2.0])
    v = tl.Variable(np.array([3.0, 4.0]))
    got_a = _in_mode(mode, lambda x: tl.fori_loop(3, 1, lambda i, c: c * 2.0, x))(a)
    got_v = _in_mode(mode, lambda: tl.fori_loop(3, 1, lambda i, c: c * 2.0, v))()
    assert isinstance(got_a, tl.Tensor) and type(got_v) is tl.Tensor
    a[:] = -1.0
    v.assign(np.array([-5.0, -5.0]))
    np.testing.assert_array_equal(got_a.numpy(), [1.0, 2.0])
    np.testing.assert_array_equal(got_v.numpy(), [3.0, 4.0])


def test_fori_loop_with_numpy_integer_bounds_is_a_differentiable_scan():
    # NumPy integer bounds were taken for tensor bounds: traced, a While, whose gradient raised asking for
    # maximum_iterations; JAX (and Python-int bounds here) make concrete bounds a scan.
    x = np.array([0.5, -1.5])

    def loss(t):
        return tl.sum(tl.fori_loop(np.int32(0), np.int64(3), lambda i, c: c * t + 1.0, tl.ones_like(t)))

    numeric = central_differences(lambda t: np.sum(((t + 1) * t + 1) * t + 1), x)
    np.testing.assert_allclose(tl.grad(loss)(tl.tensor(x)).numpy(), numeric, rtol=1e-8)
    np.testing.assert_allclose(tl.function(tl.grad(loss))(x).numpy(), numeric, rtol=1e-8)
    assert [n.op_type for n in tl.function(loss).get_graph(x).nodes].count("Scan") == 1
    with pytest.raises(TypeError, match="tl.fori_loop: lower and upper must be integers, got bool"):
        tl.fori_loop(np.bool_(False), 3, lambda i, c: c, 0.0)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", ["int32", "float32", "float16"])
def test_the_fori_loop_index_is_weakly_typed_as_in_jax(mode, dtype):
    # `c + i` with an int32 or float32 carry made it int64 or float64 (i was a strong int64), so the loop
    # raised that the carry changed dtype; in JAX the index of Python-int bounds is weakly typed.
    init = np.array([1, 2], dtype=dtype)
    got = _in_mode(mode, lambda c: tl.fori_loop(1, 5, lambda i, c: c * 2 + i, c))(init)
    want = init.copy()
    for i in range(1, 5):
        want = (want * 2 + i).astype(dtype)
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got.numpy(), want)


def test_fori_loop_matches_jax_on_its_index_types():
    jax = pytest.importorskip("jax")
    init = np.array([1.5, -2.0], np.float32)
    got = tl.function(lambda c: tl.fori_loop(0, 4, lambda i, c: c * 0.5 + i, c))(init)
    want = jax.lax.fori_loop(0, 4, lambda i, c: c * 0.5 + i, init)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got.numpy(), np.asarray(want), rtol=1e-6)


@pytest.mark.parametrize("mode", MODES)
def test_scan_and_fori_loop_take_jaxs_unroll(mode):
    # `unroll=` (JAX's, a speed hint) was a TypeError; the values are those of the plain loop.
    xs = np.array([1.0, 2.0, 4.0])
    for unroll in (1, 2, True, False):
        carry, ys = _in_mode(mode, lambda x: tl.scan(lambda c, v: (c * 0.5 + v, c), 0.0, x, unroll=unroll))(xs)
        np.testing.assert_allclose(carry.numpy(), 5.25)
        np.testing.assert_allclose(ys.numpy(), [0.0, 1.0, 2.5])
        got = _in_mode(mode, lambda x: tl.fori_loop(0, 3, lambda i, c: c * x, x, unroll=unroll))(xs)
        np.testing.assert_allclose(got.numpy(), xs**4)
    for bad in (0, -1, 1.5, "2"):
        with pytest.raises((TypeError, ValueError), match="tl.scan: unroll must be a positive int or a bool"):
            tl.scan(lambda c, v: (c, v), 0.0, xs, unroll=bad)
        with pytest.raises((TypeError, ValueError), match="tl.fori_loop: unroll must be a positive int or a bool"):
            tl.fori_loop(0, 3, lambda i, c: c, 0.0, unroll=bad)


# ------------------------------------------------------------------ every catalogue op through save -> load -> run
INFOS = all_opinfos()


def _same_graph(a, b, where: str) -> None:
    """``b`` (loaded) has ``a``'s nodes: op types, attributes (subgraphs compared the same way, recursively),
    result types, and constants bit for bit."""
    assert [n.op_type for n in a.nodes] == [n.op_type for n in b.nodes], where
    for k, (m, n) in enumerate(zip(a.nodes, b.nodes)):
        at = f"{where} node {k} ({m.op_type})"
        assert m.attrs.keys() == n.attrs.keys(), at
        for name, value in m.attrs.items():
            if isinstance(value, Graph):
                _same_graph(value, n.attrs[name], f"{at}.{name}")
            else:
                assert canonical(value) == canonical(n.attrs[name]), (
                    f"{at} attribute {name}: {value!r} vs {n.attrs[name]!r}"
                )
        assert [(o.shape, o.dtype) for o in m.outputs] == [(o.shape, o.dtype) for o in n.outputs], at
    for (t, raw), (u, raw2) in zip(a.constants.values(), b.constants.values()):
        x, y = np.asarray(t.backend.to_numpy(raw)), np.asarray(u.backend.to_numpy(raw2))
        assert (x.dtype, x.shape, x.tobytes()) == (y.dtype, y.shape, y.tobytes()), f"{where} constant {t._id}"


def _seeded(graph, *args):
    tl.random.seed(7)  # unseeded draws: the same numbers from both graphs
    return tl.tree.leaves(graph(*args))


@pytest.mark.parametrize("info", INFOS, ids=lambda info: info.name)
@settings(max_examples=int(os.environ.get("CFADV_EXAMPLES", "1")))
@given(data=st.data())
def test_every_catalogue_op_saves_loads_and_runs_the_same(info, data, tmp_path_factory):
    dtype = data.draw(st.sampled_from(info.dtypes), label="dtype")
    sample = data.draw(info.samples(dtype), label="sample")
    positions, call = sample.split(info.op)
    tensors = [tl.tensor(sample.args[k]) for k in positions]
    graph = tl.function(call).get_graph(*tensors)
    path = os.path.join(tmp_path_factory.mktemp("graphs"), "g.json")
    if any(n.op_type == "CustomGradient" for n in graph.nodes):
        with pytest.raises(ValueError, match="cannot be saved"):
            graph.save(path, include_captures=True)  # a Python grad_fn: documented
        return
    graph.save(path, include_captures=True)
    loaded = tl.graph.load(path)
    _same_graph(graph, loaded, f"{info.name} {dtype} {sample!r}")
    want, got = _seeded(graph, *tensors), _seeded(loaded, *tensors)
    assert len(want) == len(got)
    for w, g in zip(want, got):
        assert (w.dtype, w.shape) == (g.dtype, g.shape)
        np.testing.assert_array_equal(g.numpy(), w.numpy(), err_msg=f"{info.name} {dtype} {sample!r}")


@pytest.mark.parametrize("period", [4, 5])
def test_unwrap_of_integers_traces(period):
    # Found by the sweep above: traced, tl.unwrap of an integer p with an integer period raised that a symbolic
    # tensor has no value (the module's divmod is tl.divmod, so `if rem == 0` read a tensor); eagerly it ran.
    p = np.array([[0, 7, 3, -9, 2], [1, 1, 12, 5, 5]], np.int64)
    want = np.unwrap(p, axis=1, period=period)
    got = tl.function(lambda q: tl.unwrap(q, axis=1, period=period))(p)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got.numpy(), want)


# ------------------------------------------------------------------ traces a loop discards leave nothing behind
def _big_ones_body(c, x):
    return c + tl.sum(tl.ones((2000,), "float64") * x), c  # a temporary too big to embed: a capture


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: tl.scan(_big_ones_body, 0.0, x)[0],  # a weak init: the body is traced twice
        lambda x: tl.cond(x[0] > 0, lambda: tl.scan(_big_ones_body, 0.0, x)[0], lambda: x[0]),
        lambda x: tl.while_loop(lambda c: c[0] < 2, lambda c: (c[0] + 1, _big_ones_body(c[1], x[0])[0]), (0, 0.0))[1],
    ],
    ids=["scan", "scan-in-cond", "while"],
)
def test_a_body_traced_again_leaves_no_stale_capture(fn, tmp_path):
    # A scan or while_loop with a Python-number init traces its body twice (the second time with the carry's
    # dtype); the first trace's 16 KB temporary stayed a capture of the graph (and an input of an enclosing
    # Cond, with its subgraph's input), fed at every run, held while the graph is cached and saved to its file.
    x = np.array([1.0, 2.0])
    graph = tl.function(fn).get_graph(x)
    assert [c.nbytes for c in graph.captures] == [16000]
    graph.verify()
    path = str(tmp_path / "g.json")
    graph.save(path)
    np.testing.assert_allclose(tl.graph.load(path)(x).numpy(), graph(x).numpy())
    assert float(tl.function(fn)(x)) == float(fn(tl.tensor(x))) in (4000.0, 6000.0)  # 2000 * (1 + 2), or 2 * 2000 * 1


# ------------------------------------------------------------------ a carry that changes shape at run time
_UNKNOWN = [tl.TensorSpec((None,), "float64")]


def _while_shrinking(x):
    body = lambda s: {"n": s["n"] + 1, "acc": {"a": s["acc"]["a"], "b": s["acc"]["b"][1:]}}  # noqa: E731
    return tl.while_loop(lambda s: s["n"] < 3, body, {"n": tl.tensor(0), "acc": {"a": x, "b": x}})


def _scan_shrinking(x):
    return tl.scan(lambda c, v: ({"p": c["p"], "q": c["q"][1:]}, v), {"p": x, "q": x}, tl.stack([x[:1], x[:1]]))


@pytest.mark.parametrize("fn", [_while_shrinking, _scan_shrinking], ids=["while_loop", "scan"])
@pytest.mark.parametrize("mode", MODES)
def test_a_carry_that_changes_shape_names_its_path(fn, mode):
    # Traced with a None size, the shape rules cannot see the carry shrink; the node's check at run time
    # listed the leaves but not which one changed (the trace-time and eager checks name its path).
    where = r"\['acc'\]\['b'\]" if fn is _while_shrinking else r"\['q'\]"
    f = fn if mode == "eager" else tl.function(fn, input_signature=_UNKNOWN)
    with pytest.raises(
        TypeError, match=rf"must return .* \(first difference at {where}: float64\[5\] vs float64\[4\]\)"
    ):
        f(tl.tensor(np.ones(5)))


# ------------------------------------------------------------------ print(graph) of nested control flow
def test_print_names_a_conds_outer_inputs_alike_in_both_branches():
    # The branches read the outer values in different orders; each subgraph named its inputs by the order its
    # own trace met them, so one input of the node was outer[0] in true_fn and outer[2] in false_fn.
    w, b = np.array([2.0, 3.0]), np.array([0.5, -0.5])

    def fn(x):
        return tl.cond(tl.sum(x) > 0, lambda: x * w + b, lambda: tl.negative(b) - x * w)

    graph = tl.function(fn).get_graph(np.ones(2))
    (node,) = [n for n in graph.nodes if n.op_type == "Cond"]
    text = str(graph)
    for branch in ("true_fn", "false_fn"):
        header = next(line for line in text.splitlines() if f"graph {branch}(" in line)
        assert header.count("outer[") == 3 and all(f"outer[{k}]" in header for k in range(3)), header
    for sub in (node.attrs["true_graph"], node.attrs["false_graph"]):
        assert sub.input_names == [f"outer[{k}]" for k in range(3)]
    for x in (np.ones(2), -np.ones(2)):
        np.testing.assert_allclose(tl.function(fn)(x).numpy(), x * w + b if x.sum() > 0 else -b - x * w)


# ------------------------------------------------------------------ a check whose result is unused still runs traced
def _checked(x):
    tl.debugging.check_numerics(x, "bad x")  # its result unused: run for the check, as eagerly
    return x * 2.0


_UNUSED_CHECKS = {
    "top": _checked,
    "scan body": lambda xs: tl.scan(lambda c, x: (_checked(x), c), tl.zeros(2, "float64"), xs)[0],
    "cond branch": lambda xs: tl.cond(xs[0, 1] > 0, lambda: _checked(xs[0]), lambda: xs[0]),
    "unused cond": lambda xs: (tl.cond(xs[0, 1] > 0, lambda: _checked(xs[0]), lambda: xs[0]), xs[1] + 1.0)[1],
    "while body": lambda xs: tl.while_loop(lambda s: s[0] < 1, lambda s: (s[0] + 1, _checked(s[1])), (0, xs[0]))[1],
}


@pytest.mark.parametrize("where", list(_UNUSED_CHECKS))
@pytest.mark.parametrize("mode", MODES)
def test_an_unused_check_numerics_still_checks_when_traced(where, mode):
    # Dead-node elimination dropped a CheckNumerics nothing read (in the graph, a branch or a body, or the whole
    # control-flow node around it): traced, a NaN passed silently where eagerly (and in tf.function) it raises.
    fn = _UNUSED_CHECKS[where]
    xs = np.array([[np.nan, 1.0], [2.0, 3.0]])
    f = fn if mode == "eager" else tl.function(fn)
    with pytest.raises(tl.debugging.NumericsError, match="CheckNumerics: bad x: tensor had NaN values"):
        f(tl.tensor(xs))
    fine = np.array([[0.5, 1.0], [2.0, 3.0]])
    np.testing.assert_array_equal(f(tl.tensor(fine)).numpy(), fn(tl.tensor(fine)).numpy())


# ------------------------------------------------------------------ tl.remat takes jax.checkpoint's keywords
def _sin_power(x, n):
    return tl.scan(lambda c, v: (c + tl.sin(v) ** n, c), tl.zeros((), x.dtype), x)[0]


@pytest.mark.parametrize("mode", MODES)
def test_remat_takes_jax_checkpoints_keywords(mode):
    # tl.remat(f, static_argnums=1), prevent_cse= and policy= (jax.checkpoint's) were TypeErrors; the gradient is
    # the plain function's, around a scan.
    x = np.array([0.5, 1.0, -0.3])
    numeric = central_differences(lambda v: np.sum(np.sin(v) ** 3), x)
    for block in (
        tl.remat(_sin_power, static_argnums=1),
        tl.remat(_sin_power, static_argnums=(-1,), prevent_cse=False, policy=lambda *a, **k: True),
        tl.remat(static_argnums=1)(_sin_power),
    ):
        grad = _in_mode(mode, tl.grad(lambda v: block(v, 3)))
        np.testing.assert_allclose(grad(tl.tensor(x)).numpy(), numeric, rtol=1e-8)
        np.testing.assert_allclose(grad(tl.tensor(x)).numpy(), 3 * np.sin(x) ** 2 * np.cos(x), rtol=1e-12)
    block = tl.remat(_sin_power, static_argnums=1)
    for bad in (tl.tensor(3), np.array(3), [3]):
        with pytest.raises(TypeError, match=r"tl.remat\(_sin_power\): static argument 1 must be hashable"):
            block(tl.tensor(x), bad)
    with pytest.raises(TypeError, match="tl.remat: f must be callable"):
        tl.remat(3)
    with pytest.raises(TypeError, match=r"tl.remat\(_sin_power\): policy must be a callable or None"):
        tl.remat(_sin_power, policy="dots")


def test_remat_with_static_argnums_matches_jax_checkpoint():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    x = np.array([0.5, 1.0, -0.3])

    def jax_power(v, n):
        return jax.lax.scan(lambda c, w: (c + jax.numpy.sin(w) ** n, c), 0.0, v)[0]

    want = jax.grad(lambda v: jax.checkpoint(jax_power, static_argnums=(1,))(v, 3))(x)
    got = tl.grad(lambda v: tl.remat(_sin_power, static_argnums=(1,))(v, 3))(tl.tensor(x))
    np.testing.assert_allclose(got.numpy(), np.asarray(want), rtol=1e-12)
